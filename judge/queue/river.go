package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// Judging across processes. On PostgreSQL the line of submissions is a
// durable River job queue beside the records: the server inserts one job
// per submission (unique by submission, so a recovery after a crash never
// queues it twice), and workers — goroutines of `judge worker` processes
// on any host, or of the server itself — claim jobs, judge, store the
// verdict and report progress as judge_events rows with a NOTIFY that
// the server follows and publishes to the submission's followers.
const (
	judgeKind = "judge"
	// riverAttempts bounds how often one submission is judged: up to
	// MaxJudgeAttempts judgements cut short by a busy machine, and the
	// rest for workers lost mid-judgement (a crash, kill -9, a lost host).
	riverAttempts = MaxJudgeAttempts + 2
	// followPoll is how often the server reads on every submission judged
	// elsewhere, in case a notification was missed (a reconnect).
	followPoll = time.Second
)

// The kinds of judge_events rows a worker writes.
const (
	eventProgress = "progress" // a verdict.Event
	eventRetrying = "retrying" // {"attempt": n, "note": …}
	eventFinal    = "final"    // the record is settled: read it
)

// judgeArgs is a River job: judge one stored submission. Only the id is
// unique; only, a run of one test, is not in the records.
type judgeArgs struct {
	SubmissionID int64  `json:"submission_id" river:"unique"`
	Only         string `json:"only,omitempty"`
}

func (judgeArgs) Kind() string { return judgeKind }

func (judgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: riverAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// openRiver connects River to the records' PostgreSQL database and
// applies River's own migrations (its tables sit beside the records),
// under the records' migration lock: servers and workers starting
// together on an empty database would otherwise all create River's
// tables at once, and all but one fail.
func openRiver(ctx context.Context, db *records.DB) (*pgxpool.Pool, error) {
	if !db.Postgres() {
		return nil, errors.New("the judging queue needs the records on PostgreSQL (--db postgres://…)")
	}
	pool, err := pgxpool.New(ctx, db.Path())
	if err != nil {
		return nil, fmt.Errorf("judging queue: %w", err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("judging queue: %w", err)
	}
	err = db.WithMigrationLock(ctx, func(ctx context.Context) error {
		_, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("judging queue: migrate: %w", err)
	}
	return pool, nil
}

// queueDepth is how many judge jobs no worker has claimed yet.
func queueDepth(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND state IN ('available', 'retryable', 'scheduled')`,
		judgeKind).Scan(&n)
	return n, err
}

// River is the server's side of judging on PostgreSQL: admitted jobs go
// into River's queue, workers anywhere judge them, and their progress
// comes back as judge_events and is published to the jobs' followers.
type River struct {
	*line
	jg     *Judging
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx] // inserts only; workers claim
	local  *Worker               // this process's own judging, if any

	forwarding sync.WaitGroup
	stopFollow context.CancelFunc
	following  sync.WaitGroup
}

// newRiver connects to the queue and, unless judging is left to other
// processes, starts a worker of its own.
func newRiver(cfg Config) (*River, error) {
	r := &River{line: newLine(cfg.Cap), jg: judging(cfg)}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout*3)
	defer cancel()
	pool, err := openRiver(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	r.pool = pool
	r.client, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: cfg.Logger.With("component", "river")})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("judging queue: %w", err)
	}
	if !cfg.JudgeElsewhere {
		w, err := NewWorker(WorkerConfig{DB: cfg.DB, Catalog: cfg.Catalog, Engine: cfg.Engine, Slots: cfg.Workers, Logger: cfg.Logger,
			JobTimeout: cfg.JobTimeout, RescueAfter: cfg.RescueAfter, Metrics: cfg.Metrics})
		if err != nil {
			pool.Close()
			return nil, err
		}
		if err := w.Start(ctx); err != nil {
			w.Stop(0)
			pool.Close()
			return nil, err
		}
		r.local = w
	}
	if err := r.recoverUnfinished(r.jg); err != nil {
		r.closePool()
		return nil, err
	}
	// One goroutine hands jobs to the queue; workers anywhere judge.
	r.forwarding.Add(1)
	go r.forward()
	fctx, stop := context.WithCancel(context.Background())
	r.stopFollow = stop
	r.following.Add(1)
	go r.follow(fctx)
	return r, nil
}

// forward hands each admitted job to River's queue; the job stays live
// here, for its followers, until its final event comes back.
func (r *River) forward() {
	defer r.forwarding.Done()
	for j := r.pop(); j != nil; j = r.pop() {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		_, err := r.client.Insert(ctx, judgeArgs{SubmissionID: j.id, Only: j.only}, nil)
		cancel()
		if err != nil {
			r.jg.Log.Error("queue submission", "id", j.id, "err", err)
			r.abandon(j, "the judging queue could not take it; it was not counted, please submit again")
			continue
		}
		r.sent(j)
	}
}

// abandon settles a job as not judged and forgets it.
func (r *River) abandon(j *Job, note string) {
	r.jg.Settle(j.id, note, j.Publish)
	r.finish(j)
}

// follow publishes what workers report: woken by PostgreSQL
// notifications, and reading on every remote job each followPoll in case
// one was missed.
func (r *River) follow(ctx context.Context) {
	defer r.following.Done()
	ids := make(chan int64, 1024)
	go r.listen(ctx, ids)
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		select {
		case id := <-ids:
			if j := r.lookupRemote(id); j != nil {
				r.catchUp(j)
			}
		case <-t.C:
			for _, j := range r.remoteJobs() {
				r.catchUp(j)
			}
		case <-ctx.Done():
			return
		}
	}
}

// listen LISTENs for records.EventsChannel on a connection of its own,
// reconnecting after errors, until ctx ends.
func (r *River) listen(ctx context.Context, ids chan<- int64) {
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, r.jg.DB.Path())
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
		r.jg.Log.Warn("listening for judge events", "err", err)
		select {
		case <-time.After(followPoll):
		case <-ctx.Done():
		}
	}
}

// catchUp publishes a remote job's new events; only follow calls it, so
// j.seen needs no lock.
func (r *River) catchUp(j *Job) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	evs, err := r.jg.DB.JudgeEvents(ctx, j.id, j.seen)
	if err != nil {
		r.jg.Log.Warn("read judge events", "id", j.id, "err", err)
		return
	}
	for _, e := range evs {
		prev := j.seen
		j.seen = e.ID
		switch e.Kind {
		case eventProgress:
			r.begun(j)
			var ev verdict.Event
			if json.Unmarshal(e.Data, &ev) == nil {
				if pe, ok := progressEvent(ev); ok {
					j.Publish(pe)
				}
			}
		case eventRetrying:
			r.begun(j)
			var m struct {
				Attempt int    `json:"attempt"`
				Note    string `json:"note"`
			}
			if json.Unmarshal(e.Data, &m) == nil {
				j.Publish(Event{Kind: Retrying, Attempt: m.Attempt, Note: m.Note})
			}
		case eventFinal:
			if !r.finishRemote(ctx, j) {
				j.seen = prev // read it again at the next poll
			}
			return
		}
	}
}

// finishRemote publishes a remote job's stored outcome, as a follower of
// a finished submission sees it, and forgets the job; false when the
// record is not settled yet (or could not be read), to be tried again.
func (r *River) finishRemote(ctx context.Context, j *Job) bool {
	sub, err := r.jg.DB.Submission(ctx, j.id)
	if err != nil {
		r.jg.Log.Warn("read judged submission", "id", j.id, "err", err)
		return false
	}
	ev, err := FinalEvent(sub)
	switch {
	case IsUnsettled(err):
		return false
	case err != nil:
		r.jg.Log.Error("stored verdict", "id", j.id, "err", err)
		ev = Event{Kind: NotJudged, Note: "the result could not be read"}
	}
	j.Publish(ev)
	r.finish(j)
	if err := r.jg.DB.DeleteJudgeEvents(ctx, j.id); err != nil {
		r.jg.Log.Warn("forget judge events", "id", j.id, "err", err)
	}
	return true
}

// Rejudge records a re-judge of orig and queues it (see Queue).
func (r *River) Rejudge(ctx context.Context, orig *records.Submission) (bool, error) {
	return r.rejudge(ctx, r.jg, orig)
}

// Depth is how many submissions wait for a worker: River's jobs not yet
// claimed.
func (r *River) Depth(ctx context.Context) (int, error) { return queueDepth(ctx, r.pool) }

// WorkersAlive counts the judging slots of every worker seen lately.
func (r *River) WorkersAlive(ctx context.Context) (int, error) {
	_, slots, err := r.jg.DB.WorkersAlive(ctx, workerAliveWithin)
	return slots, err
}

// Close settles what never reached River's queue; judgements elsewhere go
// on and are stored, and this process's own worker drains for grace.
func (r *River) Close(ctx context.Context, grace time.Duration) {
	for _, j := range r.close() {
		r.abandon(j, "server shutting down")
	}
	done := make(chan struct{})
	go func() { r.forwarding.Wait(); close(done) }()
	waitGrace(ctx, done, grace, func() {}, r.jg.Log)
	if r.local != nil {
		r.local.Stop(grace)
	}
	r.stopFollow()
	r.following.Wait()
	r.closePool()
}

// closePool stops this process's worker, if any, and closes the connections.
func (r *River) closePool() {
	if r.local != nil {
		r.local.Stop(0)
	}
	r.pool.Close()
}

// retryPolicy retries soon: a judgement is retried because a machine was
// busy or a worker vanished, not because a remote service is down.
type retryPolicy struct{}

func (retryPolicy) NextRetry(j *rivertype.JobRow) time.Time {
	return time.Now().Add(time.Duration(j.Attempt) * judgeRetryAfter)
}
