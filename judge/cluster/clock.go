package cluster

import (
	"sort"
	"time"
)

// Epoch is the virtual clock's zero.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a test's virtual time and the timers set on it. Time moves only
// when the simulation moves it (to the next timer, a due requeue, a
// resync), so a test never depends on the machine's clock.
type Clock struct {
	Now    time.Duration // since epoch
	timers []timer
	seq    int // orders timers set for the same instant
}

type timer struct {
	at  time.Duration
	seq int
	do  func()
}

// Time is the current virtual time, as the controller reads it.
func (c *Clock) Time() time.Time { return Epoch.Add(c.Now) }

// after sets do to run d from now. Timers for the same instant run in the
// order they were set.
func (c *Clock) after(d time.Duration, do func()) {
	c.seq++
	c.timers = append(c.timers, timer{c.Now + d, c.seq, do})
	sort.Slice(c.timers, func(i, j int) bool {
		if c.timers[i].at != c.timers[j].at {
			return c.timers[i].at < c.timers[j].at
		}
		return c.timers[i].seq < c.timers[j].seq
	})
}

// FireNext runs the earliest timer, moving the clock to it, and says
// whether there was one. The timer is removed before it runs, so it may
// set others.
func (c *Clock) FireNext() bool {
	if len(c.timers) == 0 {
		return false
	}
	t := c.timers[0]
	c.timers = c.timers[1:]
	c.AdvanceTo(t.at)
	t.do()
	return true
}

// AdvanceTo moves the clock forward to at; it never goes back.
func (c *Clock) AdvanceTo(at time.Duration) {
	if at > c.Now {
		c.Now = at
	}
}
