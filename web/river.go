package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// followPoll is how often the server reads on every submission judged
// elsewhere, in case a notification was missed (a reconnect).
const followPoll = time.Second

// remote is the server's side of judging on PostgreSQL: jobs go into
// River's queue, and the workers' progress comes back as judge_events.
type remote struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx] // inserts only; workers claim
	local  *Worker               // this process's own judging, if any
}

// startRemote connects the server to the queue and, unless judging is
// left to other processes, starts a worker of its own.
func (s *Server) startRemote(cfg Config, eng judger) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout*3)
	defer cancel()
	pool, err := openQueue(ctx, cfg.DB)
	if err != nil {
		return err
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: s.log.With("component", "river")})
	if err != nil {
		pool.Close()
		return fmt.Errorf("judging queue: %w", err)
	}
	s.remote = &remote{pool: pool, client: client}
	if cfg.JudgeElsewhere {
		return nil
	}
	w, err := newWorker(WorkerConfig{DB: cfg.DB, Catalog: cfg.Catalog, Slots: cfg.Workers, Logger: s.log,
		JobTimeout: cfg.JobTimeout, RescueAfter: cfg.RescueAfter, Metrics: s.metrics}, eng)
	if err != nil {
		pool.Close()
		return err
	}
	if err := w.Start(ctx); err != nil {
		w.Stop(0)
		pool.Close()
		return err
	}
	s.remote.local = w
	return nil
}

// forward hands each admitted job to the queue; the job stays live here,
// for its streams, until its final event comes back.
func (s *Server) forward() {
	defer s.workers.Done()
	for j := s.q.pop(); j != nil; j = s.q.pop() {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		_, err := s.remote.client.Insert(ctx, judgeArgs{SubmissionID: j.id, Only: j.only}, nil)
		cancel()
		if err != nil {
			s.log.Error("queue submission", "id", j.id, "err", err)
			s.abandon(j, "the judging queue could not take it; it was not counted, please submit again")
			continue
		}
		s.q.sent(j)
	}
}

// follow streams what workers report: woken by PostgreSQL notifications,
// and reading on every remote job each followPoll in case one was missed.
func (s *Server) follow(ctx context.Context) {
	defer s.background.Done()
	ids := make(chan int64, 1024)
	go s.listen(ctx, ids)
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		select {
		case id := <-ids:
			if j := s.q.lookupRemote(id); j != nil {
				s.catchUp(j)
			}
		case <-t.C:
			for _, j := range s.q.remoteJobs() {
				s.catchUp(j)
			}
		case <-ctx.Done():
			return
		}
	}
}

// listen LISTENs for records.EventsChannel on a connection of its own,
// reconnecting after errors, until ctx ends.
func (s *Server) listen(ctx context.Context, ids chan<- int64) {
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, s.db.Path())
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+records.EventsChannel)
		}
		for err == nil {
			var n *pgconn.Notification
			n, err = conn.WaitForNotification(ctx)
			if err != nil {
				break
			}
			if id, perr := strconv.ParseInt(n.Payload, 10, 64); perr == nil {
				select {
				case ids <- id:
				default: // the poll catches up
				}
			}
		}
		if conn != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(cctx)
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("listening for judge events", "err", err)
		select {
		case <-time.After(followPoll):
		case <-ctx.Done():
		}
	}
}

// catchUp publishes a remote job's new events; only follow calls it, so
// j.seen needs no lock.
func (s *Server) catchUp(j *job) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	evs, err := s.db.JudgeEvents(ctx, j.id, j.seen)
	if err != nil {
		s.log.Warn("read judge events", "id", j.id, "err", err)
		return
	}
	for _, e := range evs {
		prev := j.seen
		j.seen = e.ID
		switch e.Kind {
		case "progress":
			s.q.started(j)
			var ev verdict.Event
			if json.Unmarshal(e.Data, &ev) == nil {
				s.progress(j, ev)
			}
		case "retrying":
			s.q.started(j)
			var m map[string]any
			if json.Unmarshal(e.Data, &m) == nil {
				j.publish("retrying", m)
			}
		case "final":
			if !s.finishRemote(ctx, j) {
				j.seen = prev // read it again at the next poll
			}
			return
		}
	}
}

// finishRemote publishes a remote job's stored outcome, as a replay of a
// finished submission does, and forgets the job; false when the record is
// not settled yet (or could not be read), to be tried again.
func (s *Server) finishRemote(ctx context.Context, j *job) bool {
	sub, err := s.db.Submission(ctx, j.id)
	if err != nil {
		s.log.Warn("read judged submission", "id", j.id, "err", err)
		return false
	}
	switch sub.State {
	case records.StateDone:
		v, err := verdict.Decode(sub.Verdict)
		if err != nil {
			s.log.Error("stored verdict", "id", j.id, "err", err)
			j.publish("not_judged", map[string]string{"note": "the result could not be read"})
			break
		}
		j.publish("done", s.doneEvent(v, sub.DurationMs))
	case records.StateNotJudged:
		j.publish("not_judged", map[string]string{"note": sub.Note})
	default:
		return false
	}
	s.q.finish(j)
	if err := s.db.DeleteJudgeEvents(ctx, j.id); err != nil {
		s.log.Warn("forget judge events", "id", j.id, "err", err)
	}
	return true
}

// queueDepth is how many submissions wait for a worker: River's jobs not
// yet claimed, on PostgreSQL; the local line, on SQLite.
func (s *Server) queueDepth(ctx context.Context) (int, error) {
	if s.remote == nil {
		return s.q.length(), nil
	}
	return queueDepth(ctx, s.remote.pool)
}

func queueDepth(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND state IN ('available', 'retryable', 'scheduled')`,
		judgeKind).Scan(&n)
	return n, err
}
