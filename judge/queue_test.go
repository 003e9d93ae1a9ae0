package judge

import (
	"testing"
	"time"
)

func TestWorkqueueIsFairAndStingy(t *testing.T) {
	q := newWorkqueue()
	for _, k := range []string{"a", "b", "a", "c", "b"} {
		q.add(k)
	}
	var got []string
	for {
		k, ok := q.get()
		if !ok {
			break
		}
		got = append(got, k)
		q.done(k)
	}
	if want := "a b c"; join(got) != want {
		t.Fatalf("order %q, want %q", join(got), want)
	}
}

func TestWorkqueueNeverRunsAKeyTwiceAtOnce(t *testing.T) {
	q := newWorkqueue()
	q.add("a")
	k, _ := q.get()
	q.add("a") // arrives while a is processing
	if _, ok := q.get(); ok {
		t.Fatal("a handed out again while still processing")
	}
	q.add("a")
	q.done(k)
	if k2, ok := q.get(); !ok || k2 != "a" {
		t.Fatal("a re-added during processing must run once more after done")
	}
	q.done("a")
	if _, ok := q.get(); ok {
		t.Fatal("a ran more than once more")
	}
}

func TestWorkqueueBackoffDoublesToItsCap(t *testing.T) {
	q := newWorkqueue()
	var ds []time.Duration
	for i := 0; i < 20; i++ {
		ds = append(ds, q.addRateLimited("a", 0))
	}
	if ds[0] != 5*time.Millisecond || ds[1] != 10*time.Millisecond || ds[2] != 20*time.Millisecond {
		t.Fatalf("backoff starts %v", ds[:3])
	}
	if last := ds[len(ds)-1]; last != backoffMax {
		t.Fatalf("backoff ends at %v, want the cap %v", last, backoffMax)
	}
	q.forget("a")
	if d := q.addRateLimited("a", 0); d != backoffBase {
		t.Fatalf("after forget the backoff is %v, want %v", d, backoffBase)
	}
}

func TestWorkqueueDelayedKeysComeDueInOrder(t *testing.T) {
	q := newWorkqueue()
	q.addAfter("late", 0, 3*time.Second)
	q.addAfter("early", 0, time.Second)
	q.addAfter("tie", 0, time.Second)
	if at, _ := q.nextDelayed(); at != time.Second {
		t.Fatalf("next due at %v", at)
	}
	q.promote(time.Second)
	a, _ := q.get()
	b, _ := q.get()
	if a != "early" || b != "tie" {
		t.Fatalf("got %s, %s", a, b)
	}
	if _, ok := q.get(); ok {
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
