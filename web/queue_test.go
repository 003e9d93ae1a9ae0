package web

import (
	"testing"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

func TestQueueOrderAndPositions(t *testing.T) {
	q := newQueue(3)
	ex := &exercise.Exercise{Slug: "x"}
	var jobs []*job
	for i := range 3 {
		if err := q.admit(int64(i)); err != nil {
			t.Fatalf("admit %d: %v", i, err)
		}
		j := newJob(int64(i+1), int64(i), ex, verdict.ModeRun, nil, 1)
		q.push(j)
		jobs = append(jobs, j)
	}
	if err := q.admit(9); err != errQueueFull {
		t.Errorf("admit past the cap: %v", err)
	}
	if got := q.pop(); got != jobs[0] {
		t.Fatalf("pop gave job %d, want 1", got.id)
	}
	// The others moved up and were told.
	evs, _ := jobs[2].since(0)
	if last := evs[len(evs)-1]; last.name != "queued" || string(last.data) != `{"position":2}` {
		t.Errorf("third job's last event %s %s", last.name, last.data)
	}
	if p := q.position(jobs[1]); p != 1 {
		t.Errorf("second job at %d", p)
	}
	if err := q.admit(9); err != nil {
		t.Errorf("admit with room: %v", err)
	}
	q.cancel(9)
	left := q.close()
	if len(left) != 2 || q.pop() != nil {
		t.Errorf("close left %d jobs", len(left))
	}
	if err := q.admit(9); err != errQueueClosed {
		t.Errorf("admit after close: %v", err)
	}
}

func TestJobLogEndsAtFinal(t *testing.T) {
	j := newJob(1, 1, nil, verdict.ModeRun, nil, 1)
	_, wake := j.since(0)
	j.publish("compiling", struct{}{})
	select {
	case <-wake:
	default:
		t.Fatal("publish did not wake subscribers")
	}
	j.publish("done", map[string]string{})
	j.publish("test", map[string]string{}) // after the end: dropped
	evs, _ := j.since(0)
	if len(evs) != 2 || !evs[1].final() {
		t.Errorf("log %v", evs)
	}
	if evs, _ := j.since(10); len(evs) != 0 {
		t.Errorf("since past the end gave %d events", len(evs))
	}
}
