package queue

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
)

// DefaultGrace is how long judgements in flight may run on once a
// server or a worker is told to stop.
const DefaultGrace = 20 * time.Second

// A Queue admits submissions into a bounded line, has them judged, and
// keeps each live submission's events for its followers. Local judges in
// this process; River hands submissions to workers through PostgreSQL.
type Queue interface {
	// Admit reserves a place for a submission of learner sent from a
	// client address ("": not counted), or says why not (ErrFull,
	// ErrTooMany, ErrAddressFull, ErrClosed); Push or Cancel must follow.
	// Learner 0 is one not created yet: Adopt counts the place once made.
	Admit(learner int64, addr string) error
	Adopt(learner int64)
	Cancel(learner int64, addr string)
	// Push queues an admitted submission, stored queued in the records;
	// only, if set, judges just that test, as a run.
	Push(id, learner int64, addr, only string) *Job
	// Position is a waiting job's place in line (1 is next), 0 once it left.
	Position(j *Job) int
	// Lookup returns the live job of a submission, nil once it is settled.
	Lookup(id int64) *Job
	// AddressCap is how many unfinished submissions one address may have.
	AddressCap() int
	// Rejudge records a re-judge of orig, a learner's submit, against
	// its exercise as it is now, and queues it: it shares the line's cap,
	// not a learner's allowance. A refused one is settled as not judged
	// at once, and queued is false; err is for the records' failures and
	// an exercise no longer in the catalog.
	Rejudge(ctx context.Context, orig *records.Submission) (queued bool, err error)
	// Depth is how many submissions wait for a worker.
	Depth(ctx context.Context) (int, error)
	// WorkersAlive counts the judging slots: this process's, or on
	// PostgreSQL every worker's seen lately.
	WorkersAlive(ctx context.Context) (int, error)
	// Close stops admissions and settles every job still waiting as not
	// judged; judgements in flight may finish for grace, then are
	// cancelled (and settled as not judged, or handed back to River's
	// queue), and everything stops before ctx ends.
	Close(ctx context.Context, grace time.Duration)
}

// Config configures a Queue.
type Config struct {
	DB      *records.DB
	Catalog *exercise.Catalog
	Engine  Judger
	Logger  *slog.Logger
	Metrics *Metrics // counts this process's verdicts; nil counts nothing
	// Cap is how many submissions may wait; 0 means DefaultCap.
	Cap int
	// Workers judging at once in this process: on SQLite 0 or more than
	// the CPUs means one per CPU; on PostgreSQL they are the slots of
	// the process's own worker, 0 one per CPU.
	Workers int
	// JudgeElsewhere, on PostgreSQL, leaves all judging to `judge worker`
	// processes: this process runs no worker of its own.
	JudgeElsewhere bool
	// JobTimeout and RescueAfter tune the process's own worker on
	// PostgreSQL (see WorkerConfig); 0 means the defaults.
	JobTimeout, RescueAfter time.Duration
	// Charge, if set, is told the client address of a submission (judged
	// in this process) whose attempt a safety net cut short: the server
	// charges its rate for it.
	Charge func(addr string)
}

// Open starts the queue the records call for: River on PostgreSQL, Local
// on SQLite; either queues again the submissions a previous run left
// unfinished.
func Open(cfg Config) (Queue, error) {
	if cfg.DB == nil || cfg.Catalog == nil || cfg.Engine == nil {
		return nil, errors.New("queue: config needs DB, Catalog and Engine")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DB.Postgres() {
		return newRiver(cfg)
	}
	return newLocal(cfg)
}

func judging(cfg Config) *Judging {
	return &Judging{DB: cfg.DB, Catalog: cfg.Catalog, Engine: cfg.Engine, Log: cfg.Logger, Metrics: cfg.Metrics}
}

// waitGrace waits for done, cancelling judgements (stop) once grace is
// over, and gives up when ctx ends.
func waitGrace(ctx context.Context, done <-chan struct{}, grace time.Duration, stop func(), log *slog.Logger) {
	select {
	case <-done:
	case <-time.After(grace):
		log.Warn("grace period over; cancelling judgements in flight")
		stop()
		select {
		case <-done:
		case <-ctx.Done():
			log.Error("judgements did not stop in time")
		}
	case <-ctx.Done():
		stop()
	}
	stop()
}
