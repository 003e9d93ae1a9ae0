package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/queue"
	"ctrljudge/judge/records"
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
	if j := s.q.Lookup(id); j != nil {
		if j.Learner() != l.ID {
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
	ev, err := queue.FinalEvent(sub)
	switch {
	case queue.IsUnsettled(err):
		ev = queue.Event{Kind: queue.NotJudged, Note: "this submission is no longer being judged; please submit again"}
	case err != nil:
		return err
	}
	j := queue.NewJob(sub.ID, sub.LearnerID)
	j.Publish(ev)
	// Its ids are not the live log's: send it whole.
	return s.capped(c, j, false)
}

// capped streams j if the caps on open streams allow one more (see
// streamGate), and refuses it with 429 otherwise.
func (s *Server) capped(c echo.Context, j *queue.Job, resume bool) error {
	addr := clientKey(c)
	if err := s.streams.acquire(j.ID(), j.Learner(), addr); err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		return err
	}
	defer s.streams.release(j.ID(), j.Learner(), addr)
	return s.stream(c, j, resume)
}

// stream sends j's events until the final one. With resume, events the
// client already has (up to Last-Event-ID) are skipped. Ids carry the
// server's epoch: after a restart the job's log starts again, and an id
// from the old log must not skip events of the new one.
func (s *Server) stream(c echo.Context, j *queue.Job, resume bool) error {
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
		evs, wake := j.Since(next)
		for _, ev := range evs {
			if _, err := fmt.Fprintf(w, "id: %s.%d\nevent: %s\ndata: %s\n\n", s.epoch, next, ev.Kind, s.eventData(ev)); err != nil {
				return nil
			}
			next++
			if ev.Final() {
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
			evs, _ := j.Since(next)
			for _, ev := range evs {
				fmt.Fprintf(w, "id: %s.%d\nevent: %s\ndata: %s\n\n", s.epoch, next, ev.Kind, s.eventData(ev))
				next++
			}
			w.Flush()
			return nil
		}
	}
}

// eventData is an event's data as the stream sends it, one line of JSON:
// queued (position), compiling, running (index, total, name), test (one
// rendered card), retrying (attempt, note), done (the whole rendered
// result) or not_judged (note).
func (s *Server) eventData(ev queue.Event) []byte {
	var v any = struct{}{}
	p := ev.Progress
	switch ev.Kind {
	case queue.Queued:
		v = map[string]int{"position": ev.Position}
	case queue.Running:
		v = map[string]any{"index": p.Index, "total": p.Total, "name": p.Name}
	case queue.Test:
		v = map[string]any{
			"index": p.Index, "total": p.Total, "name": p.Test.Name,
			"status": p.Test.Status, "html": s.renderPart("card", newCard(p.Index, p.Test)),
		}
	case queue.Retrying:
		v = map[string]any{"attempt": ev.Attempt, "note": ev.Note}
	case queue.Done:
		v = s.doneEvent(ev.Verdict, ev.Ms)
	case queue.NotJudged:
		v = map[string]string{"note": ev.Note}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return data
}
