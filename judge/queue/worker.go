package queue

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

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
)

const (
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

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	DB      *records.DB // on PostgreSQL
	Catalog *exercise.Catalog
	Engine  Judger
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

// Worker judges submissions from River's queue on PostgreSQL: what
// `judge worker` runs, and the server's own judging there. It says it is
// alive every few seconds (judge_workers), judges Slots submissions at
// once, and on Stop drains.
type Worker struct {
	jg     *Judging
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	id     string
	host   string
	slots  int

	stopBeat chan struct{}
	beatDone sync.WaitGroup
	draining chan struct{} // closed once a drain gives up on judgements in flight
	stopOnce sync.Once
}

// NewWorker connects a worker to the queue; Start starts judging.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.DB == nil || cfg.Catalog == nil || cfg.Engine == nil {
		return nil, errors.New("queue: worker config needs DB, Catalog and Engine")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Worker{jg: &Judging{DB: cfg.DB, Catalog: cfg.Catalog, Engine: cfg.Engine, Log: cfg.Logger, Metrics: cfg.Metrics},
		slots: cfg.Slots, stopBeat: make(chan struct{}), draining: make(chan struct{})}
	if w.slots <= 0 {
		w.slots = runtime.NumCPU()
	}
	w.host, _ = os.Hostname()
	b := make([]byte, 6)
	rand.Read(b)
	w.id = w.host + "-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout*3)
	defer cancel()
	pool, err := openRiver(ctx, cfg.DB)
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
		Logger:               cfg.Logger.With("component", "river"),
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
	_, slots, err := w.jg.DB.WorkersAlive(ctx, workerAliveWithin)
	return slots, err
}

// SetMetrics makes the worker count its verdicts in m; call it before Start.
func (w *Worker) SetMetrics(m *Metrics) { w.jg.Metrics = m }

// ID names the worker in logs and in judge_workers.
func (w *Worker) ID() string { return w.id }

// Slots is how many submissions the worker judges at once.
func (w *Worker) Slots() int { return w.slots }

// Seen says the worker is alive now; its error means the records do not
// answer (a health check's failure).
func (w *Worker) Seen(ctx context.Context) error {
	return w.jg.DB.WorkerSeen(ctx, w.id, "", w.slots)
}

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
	if err := w.jg.DB.WorkerSeen(ctx, w.id, w.host, w.slots); err != nil {
		w.jg.Log.Warn("heartbeat", "err", err)
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
			w.jg.Log.Warn("grace period over; handing judgements in flight back to the queue")
			close(w.draining)
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout*3)
			err = w.client.StopAndCancel(ctx)
			cancel()
		}
		close(w.stopBeat)
		w.beatDone.Wait()
		ctx, cancel = context.WithTimeout(context.Background(), storeTimeout)
		w.jg.DB.WorkerGone(ctx, w.id)
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
	res := w.jg.Judge(ctx, Attempt{ID: id, Only: rj.Args.Only, N: rj.Attempt, Max: min(MaxJudgeAttempts, rj.MaxAttempts),
		Again: "judging again", Publish: func(ev Event) { w.emit(id, ev) }})
	switch res.State {
	case Busy:
		// The clock stopped it, not the code: River judges it again.
		return fmt.Errorf("submission %d: %s", id, res.Note)
	case Stopped:
		select {
		case <-w.draining:
			// Handed back: another worker judges it from the start.
			return river.JobSnooze(handBackAfter)
		default:
		}
		if rj.Attempt >= rj.MaxAttempts {
			w.jg.Settle(id, tooBusy, func(ev Event) { w.emit(id, ev) })
			return nil
		}
		return fmt.Errorf("submission %d: judgement cut short: %w", id, ctx.Err())
	case Failed:
		if errors.Is(res.Err, records.ErrNotFound) {
			return river.JobCancel(res.Err)
		}
		return res.Err
	}
	return nil
}

// emit reports a step of a judgement as a judge_events row, for the
// server to publish.
func (w *Worker) emit(id int64, ev Event) {
	var kind string
	var v any
	switch ev.Kind {
	case Compiling, Running, Test:
		kind, v = eventProgress, ev.Progress
	case Retrying:
		kind, v = eventRetrying, map[string]any{"attempt": ev.Attempt, "note": ev.Note}
	case Done, NotJudged:
		kind, v = eventFinal, struct{}{}
	default:
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := w.jg.DB.AddJudgeEvent(ctx, id, kind, data); err != nil {
		w.jg.Log.Warn("report progress", "id", id, "err", err)
	}
}
