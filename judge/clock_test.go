package judge

import (
	"testing"
	"time"
)

func TestClockFiresTimersInTimeThenSetOrder(t *testing.T) {
	c := &clock{}
	var got []string
	c.after(2*time.Second, func() { got = append(got, "b") })
	c.after(time.Second, func() {
		got = append(got, "a")
		// A timer set while one fires is ordered with the rest.
		c.after(time.Second, func() { got = append(got, "b2") })
	})
	c.after(0, func() { got = append(got, "now") })
	for c.fireNext() {
	}
	if want := "now a b b2"; join(got) != want {
		t.Fatalf("fired %q, want %q", join(got), want)
	}
	if c.now != 2*time.Second || !c.time().Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("clock at %v after the last timer", c.now)
	}
}

func TestClockNeverGoesBack(t *testing.T) {
	c := &clock{}
	c.advanceTo(time.Minute)
	c.advanceTo(time.Second)
	if c.now != time.Minute {
		t.Fatalf("clock at %v, want 1m", c.now)
	}
	// A timer set in the past of a clock moved on fires now, not before.
	fired := false
	c.timers = append(c.timers, timer{at: time.Second, do: func() { fired = true }})
	c.fireNext()
	if !fired || c.now != time.Minute {
		t.Fatalf("fired %v, clock at %v", fired, c.now)
	}
}
