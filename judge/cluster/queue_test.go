package cluster

import (
	"testing"
	"time"
)

func TestWorkqueueIsFairAndStingy(t *testing.T) {
	q := NewWorkqueue()
	for _, k := range []string{"a", "b", "a", "c", "b"} {
		q.Add(k)
	}
	var got []string
	for {
		k, ok := q.Get()
		if !ok {
			break
		}
		got = append(got, k)
		q.Done(k)
	}
	if want := "a b c"; join(got) != want {
		t.Fatalf("order %q, want %q", join(got), want)
	}
}

func TestWorkqueueNeverRunsAKeyTwiceAtOnce(t *testing.T) {
	q := NewWorkqueue()
	q.Add("a")
	k, _ := q.Get()
	q.Add("a") // arrives while a is processing
	if _, ok := q.Get(); ok {
		t.Fatal("a handed out again while still processing")
	}
	q.Add("a")
	q.Done(k)
	if k2, ok := q.Get(); !ok || k2 != "a" {
		t.Fatal("a re-added during processing must run once more after done")
	}
	q.Done("a")
	if _, ok := q.Get(); ok {
		t.Fatal("a ran more than once more")
	}
}

func TestWorkqueueBackoffDoublesToItsCap(t *testing.T) {
	q := NewWorkqueue()
	var ds []time.Duration
	for i := 0; i < 20; i++ {
		ds = append(ds, q.AddRateLimited("a", 0))
	}
	if ds[0] != 5*time.Millisecond || ds[1] != 10*time.Millisecond || ds[2] != 20*time.Millisecond {
		t.Fatalf("backoff starts %v", ds[:3])
	}
	if last := ds[len(ds)-1]; last != backoffMax {
		t.Fatalf("backoff ends at %v, want the cap %v", last, backoffMax)
	}
	q.Forget("a")
	if d := q.AddRateLimited("a", 0); d != backoffBase {
		t.Fatalf("after forget the backoff is %v, want %v", d, backoffBase)
	}
}

func TestWorkqueueDelayedKeysComeDueInOrder(t *testing.T) {
	q := NewWorkqueue()
	q.AddAfter("late", 0, 3*time.Second)
	q.AddAfter("early", 0, time.Second)
	q.AddAfter("tie", 0, time.Second)
	if at, _ := q.NextDelayed(); at != time.Second {
		t.Fatalf("next due at %v", at)
	}
	q.Promote(time.Second)
	a, _ := q.Get()
	b, _ := q.Get()
	if a != "early" || b != "tie" {
		t.Fatalf("got %s, %s", a, b)
	}
	if _, ok := q.Get(); ok {
		t.Fatal("late came due early")
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
