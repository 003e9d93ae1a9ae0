package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// Judging across processes. On PostgreSQL the line of submissions is a
// durable River job queue beside the records: the server inserts one job
// per submission (unique by submission, so a recovery after a crash never
// queues it twice), and workers — goroutines of `judge worker` processes
// on any host, or of the server itself — claim jobs, judge, store the
// verdict and report progress as judge_events rows with a NOTIFY that
// the server follows and streams to the learner.
const (
	judgeKind = "judge"
	// riverAttempts bounds how often one submission is judged: up to
	// maxJudgeAttempts judgements cut short by a busy machine, and the
	// rest for workers lost mid-judgement (a crash, kill -9, a lost host).
	riverAttempts = maxJudgeAttempts + 2
	// heartbeatEvery is how often a worker says it is alive; a worker not
	// seen for workerAliveWithin counts as gone.
	heartbeatEvery    = 5 * time.Second
	workerAliveWithin = 3 * heartbeatEvery
	// judgeRetryAfter spaces attempts of a submission: long enough that a busy
	// machine has eased, short enough that the learner waits little.
	judgeRetryAfter = 2 * time.Second
	// handBackAfter is how soon a job a draining worker handed back may
	// be claimed again.
	handBackAfter = time.Second
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

// retryPolicy retries soon: a judgement is retried because a machine was
// busy or a worker vanished, not because a remote service is down.
type retryPolicy struct{}

func (retryPolicy) NextRetry(j *rivertype.JobRow) time.Time {
	return time.Now().Add(time.Duration(j.Attempt) * judgeRetryAfter)
}

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	DB      *records.DB // on PostgreSQL
	Catalog *exercise.Catalog
	Engine  *judge.Engine
	// Slots is how many submissions the worker judges at once; 0 means one per CPU.
	Slots  int
	Logger *slog.Logger
	// JobTimeout cuts a judgement short (it is then judged again); 0
	// means the engine's own safety net, judge.MaxJudgeTime, and a
	// minute. RescueAfter is when a job still running is taken to be a
	// lost worker's and judged again: it must exceed JobTimeout, so that
	// a live worker's judgement is never judged twice; 0 means JobTimeout
	// and a minute.
	JobTimeout, RescueAfter time.Duration
	// Metrics, if set, counts this worker's verdicts.
	Metrics *Metrics
}

// Worker judges submissions from the PostgreSQL queue: `judge worker`, or
// the server's own judging on PostgreSQL.
type Worker struct {
	db      *records.DB
	cat     *exercise.Catalog
	eng     judger
	log     *slog.Logger
	pool    *pgxpool.Pool
	client  *river.Client[pgx.Tx]
	id      string
	host    string
	slots   int
	metrics *Metrics

	stopBeat chan struct{}
	beatDone sync.WaitGroup
	draining chan struct{} // closed once a drain gives up on judgements in flight
	stopOnce sync.Once
}

// openQueue connects River to the records' PostgreSQL database and
// applies River's own migrations (its tables sit beside the records),
// under the records' migration lock: servers and workers starting
// together on an empty database would otherwise all create River's
// tables at once, and all but one fail.
func openQueue(ctx context.Context, db *records.DB) (*pgxpool.Pool, error) {
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

// NewWorker connects a worker to the queue; Start starts judging.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.DB == nil || cfg.Catalog == nil || cfg.Engine == nil {
		return nil, errors.New("web: worker config needs DB, Catalog and Engine")
	}
	return newWorker(cfg, cfg.Engine)
}

func newWorker(cfg WorkerConfig, eng judger) (*Worker, error) {
	w := &Worker{db: cfg.DB, cat: cfg.Catalog, eng: eng, log: cfg.Logger, slots: cfg.Slots, metrics: cfg.Metrics,
		stopBeat: make(chan struct{}), draining: make(chan struct{})}
	if w.log == nil {
		w.log = slog.Default()
	}
	if w.slots <= 0 {
		w.slots = runtime.NumCPU()
	}
	w.host, _ = os.Hostname()
	b := make([]byte, 6)
	rand.Read(b)
	w.id = w.host + "-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout*3)
	defer cancel()
	pool, err := openQueue(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	w.pool = pool
	timeout := cfg.JobTimeout
	if timeout <= 0 {
		timeout = judge.MaxJudgeTime + time.Minute
	}
	rescue := cfg.RescueAfter
	if rescue <= timeout {
		rescue = timeout + time.Minute
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &judgeWorker{w: w})
	w.client, err = river.NewClient(riverpgxv5.New(pool), &river.Config{
		ID:                   w.id,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: w.slots}},
		Workers:              workers,
		MaxAttempts:          riverAttempts,
		JobTimeout:           timeout,
		RescueStuckJobsAfter: rescue,
		RetryPolicy:          retryPolicy{},
		Logger:               w.log.With("component", "river"),
		FetchPollInterval:    time.Second, // LISTEN wakes workers sooner
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("judging queue: %w", err)
	}
	return w, nil
}

// QueueDepth is how many submissions wait for a worker, in every process.
func (w *Worker) QueueDepth(ctx context.Context) (int, error) { return queueDepth(ctx, w.pool) }

// WorkersAlive counts the judging slots of every worker seen lately.
func (w *Worker) WorkersAlive(ctx context.Context) (int, error) {
	_, slots, err := w.db.WorkersAlive(ctx, workerAliveWithin)
	return slots, err
}

// SetMetrics makes the worker count its verdicts in m; call it before Start.
func (w *Worker) SetMetrics(m *Metrics) { w.metrics = m }

// ID names the worker in logs and in judge_workers.
func (w *Worker) ID() string { return w.id }

// Slots is how many submissions the worker judges at once.
func (w *Worker) Slots() int { return w.slots }

// Start starts claiming jobs and saying the worker is alive, until Stop:
// River would stop hard when its start context ends, so ctx's end is
// not passed on; Stop drains.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("judging queue: %w", err)
	}
	w.beat()
	w.beatDone.Add(1)
	go func() {
		defer w.beatDone.Done()
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.beat()
			case <-w.stopBeat:
				return
			}
		}
	}()
	return nil
}

func (w *Worker) beat() {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := w.db.WorkerSeen(ctx, w.id, w.host, w.slots); err != nil {
		w.log.Warn("heartbeat", "err", err)
	}
}

// Stop drains the worker: it claims nothing more, lets judgements in
// flight finish for grace, then cancels them and hands their jobs back to
// the queue for another worker (the learner is not charged), and closes
// its connections.
func (w *Worker) Stop(grace time.Duration) error {
	var err error
	w.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		err = w.client.Stop(ctx)
		cancel()
		if err != nil {
			w.log.Warn("grace period over; handing judgements in flight back to the queue")
			close(w.draining)
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout*3)
			err = w.client.StopAndCancel(ctx)
			cancel()
		}
		close(w.stopBeat)
		w.beatDone.Wait()
		ctx, cancel = context.WithTimeout(context.Background(), storeTimeout)
		w.db.WorkerGone(ctx, w.id)
		cancel()
		w.pool.Close()
	})
	return err
}

// judgeWorker is River's worker for judge jobs.
type judgeWorker struct {
	river.WorkerDefaults[judgeArgs]
	w *Worker
}

// Work judges one submission: at most once to a stored verdict, however
// often the job is delivered.
func (jw *judgeWorker) Work(ctx context.Context, rj *river.Job[judgeArgs]) error {
	w := jw.w
	id := rj.Args.SubmissionID
	sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	sub, err := w.db.Submission(sctx, id)
	cancel()
	if errors.Is(err, records.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if sub.State == records.StateDone || sub.State == records.StateNotJudged {
		return nil // settled already: a duplicate delivery judges nothing
	}
	ex, err := w.cat.Find(sub.Exercise)
	if err != nil {
		w.settle(id, "the exercise no longer exists")
		return nil
	}
	if sub.State == records.StateQueued {
		sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err := w.db.StartSubmission(sctx, id)
		cancel()
		if err != nil && !errors.Is(err, records.ErrState) {
			return err
		}
	}
	j := newJob(sub.ID, sub.LearnerID, ex, sub.Mode, []byte(sub.Code), sub.Seed)
	j.only = rj.Args.Only
	if rj.Attempt > 1 {
		w.emit(id, "retrying", map[string]any{"attempt": rj.Attempt, "note": "judging again"})
	}
	start := time.Now()
	v := safeJudge(ctx, w.eng, w.log, judge.Submission{
		Exercise: ex, Code: j.code, FileName: ex.FileName(), Mode: j.engineMode(), Only: j.only, Seed: j.seed,
		Progress: func(ev verdict.Event) { w.emit(id, "progress", ev) },
	})
	v = j.asRun(v)
	ms := time.Since(start).Milliseconds()
	if ctx.Err() != nil {
		select {
		case <-w.draining:
			// Handed back: another worker judges it from the start.
			return river.JobSnooze(handBackAfter)
		default:
		}
		if rj.Attempt >= rj.MaxAttempts {
			w.settle(id, "the judge was too busy to finish it; it was not counted, please submit again later")
			return nil
		}
		return fmt.Errorf("submission %d: judgement cut short: %w", id, ctx.Err())
	}
	if v == nil {
		v = internalError(sub.Mode, "the judge returned no verdict")
	}
	if v.Outcome == verdict.OutcomeNotJudged {
		// The clock stopped it, not the code: judged again, at most
		// maxJudgeAttempts times, when the machine may be less busy.
		if rj.Attempt < min(maxJudgeAttempts, rj.MaxAttempts) {
			return fmt.Errorf("submission %d: %s", id, v.Message)
		}
		w.settle(id, "the judge was too busy to finish it; it was not counted, please submit again later")
		return nil
	}
	sctx, cancel = context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := w.db.FinishSubmission(sctx, id, v, ms); err != nil {
		if errors.Is(err, records.ErrState) {
			return nil // settled meanwhile (an instructor, a shutdown): nothing to store
		}
		return err
	}
	w.metrics.observe(v, time.Duration(ms)*time.Millisecond, time.Since(sub.QueuedAt))
	w.emit(id, "final", struct{}{})
	return nil
}

// settle stores a submission as not judged and says so.
func (w *Worker) settle(id int64, note string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := w.db.AbandonSubmission(ctx, id, note); err != nil {
		w.log.Error("abandon submission", "id", id, "err", err)
	}
	w.emit(id, "final", struct{}{})
}

// emit reports a step of a judgement for the server to stream.
func (w *Worker) emit(id int64, kind string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := w.db.AddJudgeEvent(ctx, id, kind, data); err != nil {
		w.log.Warn("report progress", "id", id, "err", err)
	}
}
