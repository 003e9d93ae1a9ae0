package cluster

import (
	"sort"
	"time"
)

// Workqueue mimics client-go's rate-limited workqueue on the virtual clock:
// fair (first in, first out), stingy (a key added several times before it
// is processed runs once), never processing one key twice at once (a key
// added while processing runs again after Done), with per-key exponential
// backoff for failures and AddAfter for RequeueAfter.
type Workqueue struct {
	queue      []string
	dirty      map[string]bool
	processing map[string]bool
	delayed    []delayedKey
	failures   map[string]int
	seq        int // orders delayed keys due at the same time
}

type delayedKey struct {
	key string
	at  time.Duration // virtual time
	seq int
}

const (
	backoffBase = 5 * time.Millisecond
	backoffMax  = 1000 * time.Second
)

func NewWorkqueue() *Workqueue {
	return &Workqueue{dirty: map[string]bool{}, processing: map[string]bool{}, failures: map[string]int{}}
}

func (q *Workqueue) Add(key string) {
	if q.dirty[key] {
		return
	}
	q.dirty[key] = true
	if q.processing[key] {
		return // re-queued by done
	}
	q.queue = append(q.queue, key)
}

// Waiting says whether key is queued to run again: a key added now would
// change nothing.
func (q *Workqueue) Waiting(key string) bool { return q.dirty[key] }

// Get returns the next key and marks it processing.
func (q *Workqueue) Get() (string, bool) {
	if len(q.queue) == 0 {
		return "", false
	}
	key := q.queue[0]
	q.queue = q.queue[1:]
	q.processing[key] = true
	delete(q.dirty, key)
	return key, true
}

func (q *Workqueue) Done(key string) {
	delete(q.processing, key)
	if q.dirty[key] {
		q.queue = append(q.queue, key)
	}
}

func (q *Workqueue) AddAfter(key string, now, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	q.seq++
	q.delayed = append(q.delayed, delayedKey{key, now + d, q.seq})
	sort.Slice(q.delayed, func(i, j int) bool {
		a, b := q.delayed[i], q.delayed[j]
		if a.at != b.at {
			return a.at < b.at
		}
		return a.seq < b.seq
	})
}

// AddRateLimited requeues a failed key after its backoff: 5ms doubling per
// consecutive failure, capped at 1000s, as client-go's default.
func (q *Workqueue) AddRateLimited(key string, now time.Duration) time.Duration {
	n := q.failures[key]
	q.failures[key] = n + 1
	d := backoffBase
	for i := 0; i < n && d < backoffMax; i++ {
		d *= 2
	}
	if d > backoffMax {
		d = backoffMax
	}
	q.AddAfter(key, now, d)
	return d
}

func (q *Workqueue) Forget(key string) { delete(q.failures, key) }

// NextDelayed is the due time of the earliest delayed key.
func (q *Workqueue) NextDelayed() (time.Duration, bool) {
	if len(q.delayed) == 0 {
		return 0, false
	}
	return q.delayed[0].at, true
}

// Promote moves delayed keys due by now into the queue.
func (q *Workqueue) Promote(now time.Duration) {
	for len(q.delayed) > 0 && q.delayed[0].at <= now {
		k := q.delayed[0].key
		q.delayed = q.delayed[1:]
		q.Add(k)
	}
}

func (q *Workqueue) Len() int { return len(q.queue) }

// Reset empties the queue, as a controller restart does.
func (q *Workqueue) Reset() {
	*q = *NewWorkqueue()
}
