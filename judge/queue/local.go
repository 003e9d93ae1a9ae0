package queue

import (
	"context"
	"runtime"
	"sync"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/records"
)

// Local is the queue of one process, beside records on SQLite: a line in
// memory and a pool of goroutines (never more than the CPUs) that judge.
// A judgement a safety net cut short goes back in line, to run once the
// line is empty; an unfinished submission is judged again at the next start.
type Local struct {
	*line
	jg      *Judging
	n       int
	charge  func(addr string)
	workers sync.WaitGroup
	ctx     context.Context // cancelled when Close's grace runs out
	stop    context.CancelFunc
}

func newLocal(cfg Config) (*Local, error) {
	n := cfg.Workers
	if n <= 0 || n > runtime.NumCPU() {
		n = runtime.NumCPU()
	}
	l := &Local{line: newLine(cfg.Cap), jg: judging(cfg), n: n, charge: cfg.Charge}
	l.ctx, l.stop = context.WithCancel(context.Background())
	if err := l.recoverUnfinished(l.jg); err != nil {
		return nil, err
	}
	for range n {
		l.workers.Add(1)
		go l.work()
	}
	return l, nil
}

func (l *Local) work() {
	defer l.workers.Done()
	for j := l.pop(); j != nil; j = l.pop() {
		l.judgeJob(j)
	}
}

// judgeJob judges one job and settles it, or puts it back in line.
func (l *Local) judgeJob(j *Job) {
	a := Attempt{ID: j.id, Only: j.only, N: j.attempts + 1, Max: MaxJudgeAttempts, Limit: judge.MaxJudgeTime,
		Publish: j.Publish, Queued: j.queuedAt}
	if j.addr != "" && l.charge != nil {
		// Such attempts count against the sender's rate, so that they
		// cannot buy unlimited server time.
		a.OnBusy = func() { l.charge(j.addr) }
	}
	switch res := l.jg.Judge(l.ctx, a); res.State {
	case Settled:
		l.finish(j)
	case Busy:
		j.attempts++
		j.Publish(Event{Kind: Retrying, Attempt: j.attempts + 1, Note: res.Note})
		l.retry(j)
	case Stopped:
		l.abandon(j, "server shutting down")
	case Failed:
		l.jg.Log.Error("judge submission", "id", j.id, "err", res.Err)
		l.abandon(j, res.Note)
	}
}

// abandon settles a job as not judged and forgets it.
func (l *Local) abandon(j *Job, note string) {
	l.jg.Settle(j.id, note, j.Publish)
	l.finish(j)
}

// Rejudge records a re-judge of orig and queues it (see Queue).
func (l *Local) Rejudge(ctx context.Context, orig *records.Submission) (bool, error) {
	return l.rejudge(ctx, l.jg, orig)
}

// Depth is how many submissions wait in line.
func (l *Local) Depth(context.Context) (int, error) { return l.length(), nil }

// WorkersAlive is how many goroutines judge.
func (l *Local) WorkersAlive(context.Context) (int, error) { return l.n, nil }

// Close settles what waits, lets judgements in flight run for grace,
// then cancels them: they are settled as not judged.
func (l *Local) Close(ctx context.Context, grace time.Duration) {
	for _, j := range l.close() {
		l.abandon(j, "server shutting down")
	}
	done := make(chan struct{})
	go func() { l.workers.Wait(); close(done) }()
	waitGrace(ctx, done, grace, l.stop, l.jg.Log)
}
