package queue

import (
	"testing"
)

func TestLineOrderAndPositions(t *testing.T) {
	q := newLine(3)
	var jobs []*Job
	for i := range 3 {
		if err := q.Admit(int64(i), ""); err != nil {
			t.Fatalf("admit %d: %v", i, err)
		}
		jobs = append(jobs, q.Push(int64(i+1), int64(i), "", ""))
	}
	if err := q.Admit(9, ""); err != ErrFull {
		t.Errorf("admit past the cap: %v", err)
	}
	if got := q.pop(); got != jobs[0] {
		t.Fatalf("pop gave job %d, want 1", got.id)
	}
	// The others moved up and were told.
	evs, _ := jobs[2].Since(0)
	if last := evs[len(evs)-1]; last.Kind != Queued || last.Position != 2 {
		t.Errorf("third job's last event %+v", last)
	}
	if p := q.Position(jobs[1]); p != 1 {
		t.Errorf("second job at %d", p)
	}
	if err := q.Admit(9, ""); err != nil {
		t.Errorf("admit with room: %v", err)
	}
	q.Cancel(9, "")
	left := q.close()
	if len(left) != 2 || q.pop() != nil {
		t.Errorf("close left %d jobs", len(left))
	}
	if err := q.Admit(9, ""); err != ErrClosed {
		t.Errorf("admit after close: %v", err)
	}
}

func TestJobLogEndsAtFinal(t *testing.T) {
	j := NewJob(1, 1)
	_, wake := j.Since(0)
	j.Publish(Event{Kind: Compiling})
	select {
	case <-wake:
	default:
		t.Fatal("publish did not wake subscribers")
	}
	j.Publish(Event{Kind: Done})
	j.Publish(Event{Kind: Test}) // after the end: dropped
	evs, _ := j.Since(0)
	if len(evs) != 2 || !evs[1].Final() {
		t.Errorf("log %v", evs)
	}
	if evs, _ := j.Since(10); len(evs) != 0 {
		t.Errorf("since past the end gave %d events", len(evs))
	}
}
