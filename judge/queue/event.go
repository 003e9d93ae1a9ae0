package queue

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// Kind names an event; the web server's streams use the same names.
type Kind string

// The kinds of event, in the order a submission meets them.
const (
	Queued    Kind = "queued"     // waiting; Position is its place in line
	Compiling Kind = "compiling"  // the build started
	Running   Kind = "running"    // a test started: Progress's Index, Total and Name
	Test      Kind = "test"       // a test ended: Progress.Test holds it
	Retrying  Kind = "retrying"   // judged again: Attempt, Note
	Done      Kind = "done"       // final: Verdict, stored, and Ms
	NotJudged Kind = "not_judged" // final: settled as not judged, Note says why
)

// An Event is one step of a submission's way through the queue.
type Event struct {
	Kind     Kind
	Position int           // Queued
	Progress verdict.Event // Running, Test (its Test a copy)
	Attempt  int           // Retrying
	Note     string        // Retrying, NotJudged
	Verdict  *verdict.Verdict
	Ms       int64 // Done: how long the judgement took
}

// Final reports whether the event ends a submission's log.
func (ev Event) Final() bool { return ev.Kind == Done || ev.Kind == NotJudged }

// progressEvent is the engine's progress report as an event; false for
// those not shown (a test event without its test, the engine's done).
func progressEvent(ev verdict.Event) (Event, bool) {
	switch ev.Phase {
	case verdict.PhaseCompiling:
		return Event{Kind: Compiling, Progress: verdict.Event{Phase: ev.Phase}}, true
	case verdict.PhaseRunning:
		return Event{Kind: Running, Progress: verdict.Event{Phase: ev.Phase, Index: ev.Index, Total: ev.Total, Name: ev.Name}}, true
	case verdict.PhaseTest:
		if ev.Test == nil {
			return Event{}, false
		}
		// A copy: the engine goes on writing its verdict.
		t := *ev.Test
		ev.Test = &t
		return Event{Kind: Test, Progress: ev}, true
	}
	return Event{}, false
}

// errUnsettled: the record is still queued or running.
var errUnsettled = errors.New("not settled yet")

// FinalEvent is a settled submission's final event, read from its record:
// what a late follower of a finished submission is shown. It fails with
// an error wrapping errUnsettled for one still queued or running, and
// with the decoding error for a stored verdict that cannot be read.
func FinalEvent(sub *records.Submission) (Event, error) {
	switch sub.State {
	case records.StateDone:
		v, err := verdict.Decode(sub.Verdict)
		if err != nil {
			return Event{}, fmt.Errorf("submission %d: stored verdict: %w", sub.ID, err)
		}
		return Event{Kind: Done, Verdict: v, Ms: sub.DurationMs}, nil
	case records.StateNotJudged:
		return Event{Kind: NotJudged, Note: sub.Note}, nil
	}
	return Event{}, fmt.Errorf("submission %d is %s: %w", sub.ID, sub.State, errUnsettled)
}

// IsUnsettled reports whether FinalEvent failed because the submission is
// still queued or running.
func IsUnsettled(err error) bool { return errors.Is(err, errUnsettled) }

// A Job is one live submission and its event log: every event since it
// was taken in, so that a late or reconnecting follower replays it.
type Job struct {
	id, learner int64
	addr        string // the client address that sent it; "" for recovered jobs and re-judges
	only        string // judge just this test; "" for all of the mode's
	rejudge     bool   // an instructor's re-judge: not counted against the learner
	attempts    int    // judgements so far that the machine's load cut short
	// On PostgreSQL a worker elsewhere judges the job: remote once it
	// went into River's queue, started once a worker reported on it,
	// seen the last of its judge_events published (follow's alone).
	remote, started bool
	seen            int64
	queuedAt        time.Time // when this process took it in

	mu    sync.Mutex
	log   []Event
	final bool
	wake  chan struct{} // closed and replaced on every publish
}

// NewJob makes a job with an empty log, for a submission of learner.
func NewJob(id, learner int64) *Job {
	return &Job{id: id, learner: learner, wake: make(chan struct{}), queuedAt: time.Now()}
}

// ID is the submission's id.
func (j *Job) ID() int64 { return j.id }

// Learner is the learner who sent it.
func (j *Job) Learner() int64 { return j.learner }

// Publish appends an event; nothing is appended after a final one.
func (j *Job) Publish(ev Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.final {
		return
	}
	j.log = append(j.log, ev)
	j.final = ev.Final()
	close(j.wake)
	j.wake = make(chan struct{})
}

// Since returns the events from index n on, and a channel closed when
// more arrive.
func (j *Job) Since(n int) ([]Event, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n > len(j.log) {
		n = len(j.log)
	}
	return j.log[n:len(j.log):len(j.log)], j.wake
}
