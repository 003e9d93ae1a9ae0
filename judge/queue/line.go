package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"ctrljudge/judge"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// Line limits. A learner may have a few submissions waiting so that Run
// then Submit works, but cannot fill the line alone.
const (
	DefaultCap           = 64
	MaxPendingPerLearner = 3
	// A client address may hold at most this share of the line (a
	// fraction, of its cap): dropping the cookie makes a new learner each
	// time, so only the address bounds a cookie-less flood, and half
	// leaves room for everyone else. A class of 30 behind one NAT address
	// with one submission each fits in half of the default 64.
	maxAddressShare = 0.5
)

// Why a submission is refused.
var (
	ErrFull        = errors.New("the judge is busy: too many submissions are waiting")
	ErrTooMany     = errors.New("you already have submissions waiting; let them finish first")
	ErrAddressFull = errors.New("the judge is busy: many submissions from your network are waiting")
	ErrClosed      = errors.New("the server is shutting down")
)

// line is the bounded line of jobs waiting to be judged (or sent to
// River), plus every job not yet finished so that followers can find it;
// both queues admit through it.
type line struct {
	mu       sync.Mutex
	cond     *sync.Cond
	waiting  []*Job
	retries  []*Job // judged again once waiting is empty
	live     map[int64]*Job
	pending  map[int64]int  // per learner: admitted and not finished
	byAddr   map[string]int // per client address: admitted and not finished
	reserved int            // admitted, not yet pushed
	remote   int            // sent to River's queue, no worker on it yet
	cap      int
	closed   bool
}

func newLine(capacity int) *line {
	if capacity <= 0 {
		capacity = DefaultCap
	}
	q := &line{live: map[int64]*Job{}, pending: map[int64]int{}, byAddr: map[string]int{}, cap: capacity}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Admit reserves a place for a submission of learner sent from a client
// address ("": not counted); Push or Cancel must follow. Learner 0 is
// one not created yet, made only once admitted: Adopt then counts the
// place against it.
func (q *line) Admit(learner int64, addr string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.room(); err != nil {
		return err
	}
	switch {
	case learner != 0 && q.pending[learner] >= MaxPendingPerLearner:
		return ErrTooMany
	case addr != "" && q.byAddr[addr] >= q.addressCap():
		return ErrAddressFull
	}
	q.reserved++
	if learner != 0 {
		q.pending[learner]++
	}
	if addr != "" {
		q.byAddr[addr]++
	}
	return nil
}

// depth is how many places are taken in the line: waiting here, admitted,
// or in River's queue with no worker on them yet.
func (q *line) depth() int { return len(q.waiting) + q.reserved + q.remote }

// AddressCap is how many unfinished submissions one address may have.
func (q *line) AddressCap() int { return q.addressCap() }

func (q *line) addressCap() int {
	return max(int(float64(q.cap)*maxAddressShare), MaxPendingPerLearner)
}

// Adopt counts a place admitted for a learner not yet created (learner 0)
// against the learner now made.
func (q *line) Adopt(learner int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending[learner]++
}

// Cancel gives back a place Admit reserved (learner 0 if never adopted).
func (q *line) Cancel(learner int64, addr string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved--
	q.release(learner, addr)
}

func (q *line) release(learner int64, addr string) {
	if learner != 0 {
		if q.pending[learner]--; q.pending[learner] <= 0 {
			delete(q.pending, learner)
		}
	}
	if addr != "" {
		if q.byAddr[addr]--; q.byAddr[addr] <= 0 {
			delete(q.byAddr, addr)
		}
	}
}

// Push adds an admitted submission, stored queued in the records, at the
// back of the line: only, if set, judges just that test, as a run. The
// job is live until its final event.
func (q *line) Push(id, learner int64, addr, only string) *Job {
	j := NewJob(id, learner)
	j.addr, j.only = addr, only
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved--
	q.add(j)
	return j
}

// pushRejudge adds a re-judge if the line has room.
func (q *line) pushRejudge(j *Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.room(); err != nil {
		return err
	}
	q.add(j)
	return nil
}

// room says why the line takes nothing more, or nil if it does; q.mu is
// held.
func (q *line) room() error {
	switch {
	case q.closed:
		return ErrClosed
	case q.depth() >= q.cap:
		return ErrFull
	}
	return nil
}

// recover adds a job found unfinished at start; the cap does not apply, as
// the submission was admitted before the restart.
func (q *line) recover(j *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !j.rejudge {
		q.pending[j.learner]++
	}
	q.add(j)
}

func (q *line) add(j *Job) {
	q.waiting = append(q.waiting, j)
	q.live[j.id] = j
	j.Publish(Event{Kind: Queued, Position: len(q.waiting)})
	q.cond.Signal()
}

// pop waits for the next job; nil once the line is closed.
func (q *line) pop() *Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.waiting) == 0 && len(q.retries) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil
	}
	if len(q.waiting) == 0 {
		j := q.retries[0]
		q.retries = q.retries[1:]
		return j
	}
	j := q.waiting[0]
	q.waiting[0] = nil
	q.waiting = q.waiting[1:]
	for i, w := range q.waiting {
		w.Publish(Event{Kind: Queued, Position: i + 1})
	}
	return j
}

// retry puts back a job whose judgement a safety net cut short; it runs
// again once no other job waits, when the machine is least busy.
func (q *line) retry(j *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retries = append(q.retries, j)
	q.cond.Signal()
}

// finish forgets a job whose final event is published and stored.
func (q *line) finish(j *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.live, j.id)
	if j.remote && !j.started {
		j.started = true
		q.remote--
	}
	if !j.rejudge {
		q.release(j.learner, j.addr)
	}
}

// sent marks a job handed to River's queue.
func (q *line) sent(j *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !j.remote {
		j.remote = true
		q.remote++
	}
}

// begun marks a remote job a worker has begun: it leaves the line.
func (q *line) begun(j *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.remote && !j.started {
		j.started = true
		q.remote--
	}
}

// lookupRemote returns the live job with id if it went to River's queue.
func (q *line) lookupRemote(id int64) *Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j := q.live[id]; j != nil && j.remote {
		return j
	}
	return nil
}

// remoteJobs lists the live jobs judged elsewhere, by id.
func (q *line) remoteJobs() []*Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*Job
	for _, j := range q.live {
		if j.remote {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.id, b.id) })
	return out
}

// Lookup returns the live job of submission id, or nil once it is
// finished (or was never here).
func (q *line) Lookup(id int64) *Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.live[id]
}

// close stops admissions and wakes the workers; it returns the jobs that
// never started, for the caller to settle.
func (q *line) close() []*Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	left := append(q.waiting, q.retries...)
	q.waiting, q.retries = nil, nil
	q.cond.Broadcast()
	return left
}

// length is the number of jobs waiting.
func (q *line) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// Position is a waiting job's place in line (1 is next), 0 once it left.
func (q *line) Position(j *Job) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, w := range q.waiting {
		if w == j {
			return i + 1
		}
	}
	return 0
}

// recoverUnfinished queues again what a previous run admitted and never
// finished; a submission whose exercise is gone is settled at once.
func (q *line) recoverUnfinished(jg *Judging) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	subs, err := jg.DB.Unfinished(ctx)
	if err != nil {
		return fmt.Errorf("find unfinished submissions: %w", err)
	}
	for _, sub := range subs {
		if _, err := jg.Catalog.Find(sub.Exercise); err != nil {
			if err := jg.DB.AbandonSubmission(ctx, sub.ID, "the exercise no longer exists"); err != nil {
				return fmt.Errorf("settle submission %d: %w", sub.ID, err)
			}
			continue
		}
		j := NewJob(sub.ID, sub.LearnerID)
		j.rejudge = sub.RejudgeOf != 0
		q.recover(j)
	}
	if len(subs) > 0 {
		jg.Log.Info("queued unfinished submissions again", "count", len(subs))
	}
	return nil
}

// rejudge records a re-judge of orig, a learner's submit, against its
// exercise as it is now, and queues it: the new record names orig and
// the exercise's version, and is judged in submit mode with orig's code
// and seed. Re-judges share the line's cap but not a learner's
// allowance. When the line refuses one, its record is settled as not
// judged, never left queued with nobody to judge it, and queued is false.
func (q *line) rejudge(ctx context.Context, jg *Judging, orig *records.Submission) (queued bool, err error) {
	ex, err := jg.Catalog.Find(orig.Exercise)
	if err != nil {
		return false, fmt.Errorf("re-judge submission %d: %w", orig.ID, err)
	}
	s := &records.Submission{LearnerID: orig.LearnerID, Exercise: ex.Slug, ExerciseVersion: ex.Version,
		Engine: judge.EngineVersion, Mode: verdict.ModeSubmit, Code: orig.Code, Seed: orig.Seed, RejudgeOf: orig.ID}
	if err := jg.DB.CreateSubmission(ctx, s); err != nil {
		return false, fmt.Errorf("re-judge submission %d: %w", orig.ID, err)
	}
	j := NewJob(s.ID, s.LearnerID)
	j.rejudge = true
	if err := q.pushRejudge(j); err != nil {
		if aerr := jg.DB.AbandonSubmission(ctx, s.ID, "not judged: "+err.Error()); aerr != nil {
			return false, errors.Join(err, aerr)
		}
		return false, nil
	}
	return true, nil
}
