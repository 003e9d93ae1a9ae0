package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// Queue limits. A learner may have a few submissions waiting so that Run
// then Submit works, but cannot fill the queue alone.
const (
	defaultQueueCap      = 64
	maxPendingPerLearner = 3
	// A client address may hold at most this share of the line (a
	// fraction, of the queue's cap): dropping the cookie makes a new
	// learner each time, so only the address bounds a cookie-less flood,
	// and half leaves room for everyone else. A class of 30 behind one NAT
	// address with one submission each fits in half of the default 64.
	maxAddressShare = 0.5
	// maxJudgeAttempts is how often a submission that a wall-clock safety
	// net stopped (verdict.OutcomeNotJudged) is judged in all before it is
	// settled as not judged; a retry waits until the line is empty.
	maxJudgeAttempts = 3
)

var (
	errQueueFull   = errors.New("the judge is busy: too many submissions are waiting")
	errTooMany     = errors.New("you already have submissions waiting; let them finish first")
	errAddressFull = errors.New("the judge is busy: many submissions from your network are waiting")
	errQueueClosed = errors.New("the server is shutting down")
)

// An event is one server-sent event in a job's log.
type event struct {
	name string // queued, compiling, running, test, done, not_judged
	data []byte // JSON, one line
}

// final events end a stream.
func (ev event) final() bool { return ev.name == "done" || ev.name == "not_judged" }

// A job is one submission being judged, with its event log.
type job struct {
	id       int64
	learner  int64
	ex       *exercise.Exercise
	mode     verdict.Mode
	code     []byte
	seed     uint64
	only     string // judge just this test (a run of one test); "" for all of the mode's
	addr     string // the client address that sent it; "" for recovered jobs and re-judges
	running  bool   // already marked running in the store (a recovered job)
	rejudge  bool   // an instructor's re-judge: not counted against the learner
	attempts int    // judgements so far that the machine's load cut short
	// On PostgreSQL a worker elsewhere may judge the job: remote once it
	// went into the queue, started once a worker reported on it, seen
	// the last of its judge_events streamed (follow's alone).
	remote, started bool
	seen            int64
	queuedAt        time.Time // when this process took it in

	mu    sync.Mutex
	log   []event
	final bool
	wake  chan struct{} // closed and replaced on every publish
}

func newJob(id, learner int64, ex *exercise.Exercise, mode verdict.Mode, code []byte, seed uint64) *job {
	return &job{id: id, learner: learner, ex: ex, mode: mode, code: code, seed: seed, wake: make(chan struct{}), queuedAt: time.Now()}
}

// publish appends an event; nothing is appended after a final one.
func (j *job) publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.final {
		return
	}
	ev := event{name: name, data: data}
	j.log = append(j.log, ev)
	j.final = ev.final()
	close(j.wake)
	j.wake = make(chan struct{})
}

// since returns the events from index n on, and a channel closed when more
// arrive.
func (j *job) since(n int) ([]event, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n > len(j.log) {
		n = len(j.log)
	}
	return j.log[n:len(j.log):len(j.log)], j.wake
}

// queue is the bounded line of jobs waiting for a worker, plus every job
// not yet finished so that streams can find it.
type queue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	waiting  []*job
	retries  []*job // judged again once waiting is empty
	live     map[int64]*job
	pending  map[int64]int  // per learner: admitted and not finished
	byAddr   map[string]int // per client address: admitted and not finished
	reserved int            // admitted, not yet pushed
	remote   int            // sent to the PostgreSQL queue, no worker on it yet
	cap      int
	closed   bool
}

func newQueue(capacity int) *queue {
	q := &queue{live: map[int64]*job{}, pending: map[int64]int{}, byAddr: map[string]int{}, cap: capacity}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// admit reserves a place for one of learner's submissions; push or cancel
// must follow.
func (q *queue) admit(learner int64) error { return q.admitFrom(learner, "") }

// admitFrom reserves a place for a submission of learner sent from a
// client address ("": not counted); push or cancelFrom must follow.
// Learner 0 is one not created yet, made only once admitted: adopt then
// counts the place against it.
func (q *queue) admitFrom(learner int64, addr string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return errQueueClosed
	case q.depth() >= q.cap:
		return errQueueFull
	case learner != 0 && q.pending[learner] >= maxPendingPerLearner:
		return errTooMany
	case addr != "" && q.byAddr[addr] >= q.addressCap():
		return errAddressFull
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
// or in the PostgreSQL queue with no worker on them yet.
func (q *queue) depth() int { return len(q.waiting) + q.reserved + q.remote }

// sent marks a job handed to the PostgreSQL queue.
func (q *queue) sent(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !j.remote {
		j.remote = true
		q.remote++
	}
}

// started marks a remote job a worker has begun: it leaves the line.
func (q *queue) started(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.remote && !j.started {
		j.started = true
		q.remote--
	}
}

// lookupRemote returns the live job with id if it went to the PostgreSQL queue.
func (q *queue) lookupRemote(id int64) *job {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j := q.live[id]; j != nil && j.remote {
		return j
	}
	return nil
}

// remoteJobs lists the live jobs judged elsewhere, by id.
func (q *queue) remoteJobs() []*job {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*job
	for _, j := range q.live {
		if j.remote {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *job) int { return cmp.Compare(a.id, b.id) })
	return out
}

// addressCap is how many unfinished submissions one address may have.
func (q *queue) addressCap() int {
	return max(int(float64(q.cap)*maxAddressShare), maxPendingPerLearner)
}

// adopt counts a place admitted for a learner not yet created (learner 0)
// against the learner now made.
func (q *queue) adopt(learner int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending[learner]++
}

// cancel gives back a place admit reserved.
func (q *queue) cancel(learner int64) { q.cancelFrom(learner, "") }

// cancelFrom gives back a place admitFrom reserved (learner 0 if never adopted).
func (q *queue) cancelFrom(learner int64, addr string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved--
	q.release(learner, addr)
}

func (q *queue) release(learner int64, addr string) {
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

// push adds an admitted job at the back of the line.
func (q *queue) push(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved--
	q.add(j)
}

// pushRejudge adds a re-judge if the queue has room.
func (q *queue) pushRejudge(j *job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return errQueueClosed
	case q.depth() >= q.cap:
		return errQueueFull
	}
	q.add(j)
	return nil
}

// recover adds a job found unfinished at start; the cap does not apply, as
// the submission was admitted before the restart.
func (q *queue) recover(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !j.rejudge {
		q.pending[j.learner]++
	}
	q.add(j)
}

func (q *queue) add(j *job) {
	q.waiting = append(q.waiting, j)
	q.live[j.id] = j
	j.publish("queued", map[string]int{"position": len(q.waiting)})
	q.cond.Signal()
}

// pop waits for the next job; nil once the queue is closed.
func (q *queue) pop() *job {
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
		w.publish("queued", map[string]int{"position": i + 1})
	}
	return j
}

// retry puts back a job whose judgement a safety net cut short; it runs
// again once no other job waits, when the machine is least busy.
func (q *queue) retry(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retries = append(q.retries, j)
	q.cond.Signal()
}

// finish forgets a job whose final event is published and stored.
func (q *queue) finish(j *job) {
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

func (q *queue) lookup(id int64) *job {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.live[id]
}

// close stops admissions and wakes the workers; it returns the jobs that
// never started, for the caller to settle.
func (q *queue) close() []*job {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	left := append(q.waiting, q.retries...)
	q.waiting, q.retries = nil, nil
	q.cond.Broadcast()
	return left
}

// length is the number of jobs waiting.
func (q *queue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// position is a waiting job's place in line (1 is next), 0 once it left.
func (q *queue) position(j *job) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, w := range q.waiting {
		if w == j {
			return i + 1
		}
	}
	return 0
}
