package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// heartbeatInterval keeps idle event streams open through proxies.
const heartbeatInterval = 15 * time.Second

// handleEvents streams a submission's progress as server-sent events:
// queued (position), compiling, running (index, total, name), test (one
// rendered card), then done (the whole rendered result) or not_judged. Event
// ids are positions in the job's log (after this run's epoch), so a
// reconnecting EventSource resumes where it stopped.
func (s *Server) handleEvents(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return echo.NewHTTPError(http.StatusNotFound, "no such submission")
	}
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	notFound := echo.NewHTTPError(http.StatusNotFound, "no such submission")
	if l == nil {
		return notFound
	}
	if j := s.q.lookup(id); j != nil {
		if j.learner != l.ID {
			return notFound
		}
		return s.capped(c, j, true)
	}
	sub, err := s.db.Submission(c.Request().Context(), id)
	if errors.Is(err, records.ErrNotFound) || err == nil && sub.LearnerID != l.ID {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("submission %d: %w", id, err)
	}
	// Finished before the stream was opened, or by an earlier run of the
	// server: replay the stored result.
	j := newJob(sub.ID, sub.LearnerID, nil, sub.Mode, nil, sub.Seed)
	switch sub.State {
	case records.StateDone:
		v, err := verdict.Decode(sub.Verdict)
		if err != nil {
			return fmt.Errorf("submission %d: stored verdict: %w", id, err)
		}
		j.publish("done", s.doneEvent(v, sub.DurationMs))
	case records.StateNotJudged:
		j.publish("not_judged", map[string]string{"note": sub.Note})
	default:
		j.publish("not_judged", map[string]string{"note": "this submission is no longer being judged; please submit again"})
	}
	// Its ids are not the live log's: send it whole.
	return s.capped(c, j, false)
}

// capped streams j if the caps on open streams allow one more (see
// streamGate), and refuses it with 429 otherwise.
func (s *Server) capped(c echo.Context, j *job, resume bool) error {
	addr := clientKey(c)
	if err := s.streams.acquire(j.id, j.learner, addr); err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		return err
	}
	defer s.streams.release(j.id, j.learner, addr)
	return s.stream(c, j, resume)
}

// stream sends j's events until the final one. With resume, events the
// client already has (up to Last-Event-ID) are skipped. Ids carry the
// server's epoch: after a restart the job's log starts again, and an id
// from the old log must not skip events of the new one.
func (s *Server) stream(c echo.Context, j *job, resume bool) error {
	next := 0
	if epoch, n, ok := strings.Cut(c.Request().Header.Get("Last-Event-ID"), "."); resume && ok && epoch == s.epoch {
		if last, err := strconv.Atoi(n); err == nil && last >= 0 {
			next = last + 1
		}
	}
	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// The server's write timeout would cut a long stream.
	_ = http.NewResponseController(w.Writer).SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return nil
	}
	w.Flush()
	beat := time.NewTicker(heartbeatInterval)
	defer beat.Stop()
	for {
		evs, wake := j.since(next)
		for _, ev := range evs {
			if _, err := fmt.Fprintf(w, "id: %s.%d\nevent: %s\ndata: %s\n\n", s.epoch, next, ev.name, ev.data); err != nil {
				return nil
			}
			next++
			if ev.final() {
				w.Flush()
				return nil
			}
		}
		w.Flush()
		select {
		case <-wake:
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return nil
			}
		case <-c.Request().Context().Done():
			return nil
		case <-s.closing:
			// Shutdown settled every job, so the final event is in the log.
			evs, _ := j.since(next)
			for _, ev := range evs {
				fmt.Fprintf(w, "id: %s.%d\nevent: %s\ndata: %s\n\n", s.epoch, next, ev.name, ev.data)
				next++
			}
			w.Flush()
			return nil
		}
	}
}
