package cluster

import (
	"testing"
	"time"
)

func TestClockFiresTimersInTimeThenSetOrder(t *testing.T) {
	c := &Clock{}
	var got []string
	c.after(2*time.Second, func() { got = append(got, "b") })
	c.after(time.Second, func() {
		got = append(got, "a")
		// A timer set while one fires is ordered with the rest.
		c.after(time.Second, func() { got = append(got, "b2") })
	})
	c.after(0, func() { got = append(got, "now") })
	for c.FireNext() {
	}
	if want := "now a b b2"; join(got) != want {
		t.Fatalf("fired %q, want %q", join(got), want)
	}
	if c.Now != 2*time.Second || !c.Time().Equal(Epoch.Add(2*time.Second)) {
		t.Fatalf("clock at %v after the last timer", c.Now)
	}
}

func TestClockNeverGoesBack(t *testing.T) {
	c := &Clock{}
	c.AdvanceTo(time.Minute)
	c.AdvanceTo(time.Second)
	if c.Now != time.Minute {
		t.Fatalf("clock at %v, want 1m", c.Now)
	}
	// A timer set in the past of a clock moved on fires now, not before.
	fired := false
	c.timers = append(c.timers, timer{at: time.Second, do: func() { fired = true }})
	c.FireNext()
	if !fired || c.Now != time.Minute {
		t.Fatalf("fired %v, clock at %v", fired, c.Now)
	}
}
