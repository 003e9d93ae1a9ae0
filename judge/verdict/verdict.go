// Package verdict is the judge's contract with everyone who shows, stores
// or reports its answers: the verdict and its test results, and every name
// that appears in them — outcomes, oracles, fault classes, progress phases
// and timeline marks — each with the words people read beside it, the way
// net/http keeps StatusText beside the status codes. It uses the standard
// library only, so records and reports can depend on it without the engine.
package verdict

import (
	"encoding/json"
	"fmt"
)

// A Verdict is the judge's answer for one submission. Its JSON form follows
// Exercism's results.json (version 3): an overall status and the tests in
// order. Everything in it is a function of the code, the exercise and the
// seed, so the same inputs give byte-identical JSON; wall-clock durations are
// kept out of the JSON for that reason.
type Verdict struct {
	Version  int     `json:"version"`           // always 3
	Status   Status  `json:"status"`            // pass, fail or error
	Outcome  Outcome `json:"outcome"`           // the named terminal state
	Message  string  `json:"message,omitempty"` // for compile and internal errors: what went wrong
	Exercise string  `json:"exercise"`          // slug
	// ExerciseVersion is a content hash of the exercise folder, Engine the
	// judge's version: together with Seed they make a run reproducible.
	ExerciseVersion string       `json:"exercise_version"`
	Engine          string       `json:"engine"`
	Mode            Mode         `json:"mode"`
	Seed            uint64       `json:"seed"`
	Diagnostics     []Diagnostic `json:"diagnostics,omitempty"` // compile errors at the learner's lines
	Tests           []TestResult `json:"tests"`
	Passed          int          `json:"passed"`
	Failed          int          `json:"failed"`
	// Truncated says the verdict reached its size limit, and Cut in words
	// what was left out (see the tests' own Cut).
	Truncated bool   `json:"truncated,omitempty"`
	Cut       string `json:"cut,omitempty"`
	// Timings are wall-clock figures for people, never part of the JSON.
	Timings Timings `json:"-"`
}

// Decode reads a verdict from its stored JSON form.
func Decode(b []byte) (*Verdict, error) {
	v := &Verdict{}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("decode verdict: %w", err)
	}
	return v, nil
}

// Timings are wall-clock durations in milliseconds.
type Timings struct {
	BuildMs, CompileMs, RunMs, TotalMs int64
	Cached                             bool // the module came from the cache
}

// Diagnostic is one compiler message at the learner's file:line:col.
type Diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

// TestResult is the outcome of one test.
type TestResult struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Sample bool   `json:"sample,omitempty"`
	// Oracle names the check that failed.
	Oracle Oracle `json:"oracle,omitempty"`
	// Message says in plain words what went wrong; Hint where to look.
	Message string `json:"message,omitempty"`
	Hint    string `json:"hint,omitempty"`
	// Faults lists, in plain words, the faults injected in this run.
	Faults []string `json:"faults,omitempty"`
	// FaultClasses are the fault kinds that fired, for analytics.
	FaultClasses []Fault `json:"fault_classes,omitempty"`
	Seed         uint64  `json:"seed"`
	Replay       string  `json:"replay,omitempty"` // the command that replays this test
	// Output is what the controller logged (ctrl.Log, stdout, stderr),
	// capped; OutputTruncated says the cap was hit.
	Output          string `json:"output,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	// Trace is the compact story of the run's last steps: at most
	// MaxTraceLines of them.
	Trace []TraceLine `json:"trace,omitempty"`
	// Timeline is one point per step, for a picture of desired vs actual.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
	// Violation, for a safety failure on a count, is the count the
	// violating write made and its bound, so that a picture draws them
	// without reading the message.
	Violation *Violation `json:"violation,omitempty"`
	// Shrunk, for the first failing test, is the smallest set of its
	// planned faults that still fails it with the same oracle.
	Shrunk *Shrunk `json:"shrunk,omitempty"`
	// Scenario is a failing generated scenario as a test in tests.yaml
	// syntax, with its own seed: the smallest found when it is the first
	// failure (Shrunk), else as it ran. Saved to a file it replays alone
	// (judge test ID --scenario FILE), and an author can paste it into
	// tests.yaml as it is.
	Scenario string `json:"scenario,omitempty"`
	// Cut says what of this result was left out to keep the verdict
	// within its size limit.
	Cut        string `json:"cut,omitempty"`
	Reconciles int    `json:"reconciles"`
	Writes     int    `json:"writes"`
	DurationMs int64  `json:"-"`
	// Steps is the learner's work in all the test's runs (sandbox steps),
	// for the submission's budget; not kept with the verdict.
	Steps int64 `json:"-"`
}

// MaxTraceLines is how many of a run's last steps a test result's trace
// keeps; the end of a run is what explains it.
const MaxTraceLines = 40

// Shrunk is a failing test's smallest fault plan and how to replay it.
type Shrunk struct {
	Faults []Fault `json:"faults"` // may be empty: it fails without faults
	Replay string  `json:"replay"`
}

// TraceLine is one step of a run: at virtual time T (ms), Actor did Event.
type TraceLine struct {
	Step  int    `json:"step"`
	T     int64  `json:"t_ms"`
	Actor string `json:"actor"` // user, controller, kubelet, gc, fault, other-writer
	Event string `json:"event"`
}

// TimelinePoint samples the world after a step.
type TimelinePoint struct {
	Step    int   `json:"step"`
	T       int64 `json:"t_ms"`
	Desired int   `json:"desired"`
	Actual  int   `json:"actual"`
	Ready   int   `json:"ready"`
	Mark    Mark  `json:"mark,omitempty"` // what happened at this step, if anything
	// TraceStep is the step of the trace's last line when the point was
	// sampled: where the point falls in the trace table.
	TraceStep int `json:"trace_step,omitempty"`
}

// Violation is a write that broke a bound on a count: the count it made
// (Value) against the bound, on the line of the Pods there are (LineActual,
// an upper bound) or of the Ready ones (LineReady, a lower bound), and the
// trace step of the write.
type Violation struct {
	Line  Line `json:"line"`
	Value int  `json:"value"`
	Bound int  `json:"bound"`
	Step  int  `json:"step"`
}

// Line names a line of the timeline.
type Line string

const (
	LineActual Line = "actual"
	LineReady  Line = "ready"
)

// Event is progress reported while judging, for live displays.
type Event struct {
	Phase Phase       `json:"phase"`
	Index int         `json:"index,omitempty"` // 1-based test index for running and test
	Total int         `json:"total,omitempty"`
	Name  string      `json:"name,omitempty"`
	Test  *TestResult `json:"test,omitempty"`
}

// FirstFailure returns the first test that did not pass, or a zero value.
func (v *Verdict) FirstFailure() TestResult {
	for _, t := range v.Tests {
		if t.Status != StatusPass {
			return t
		}
	}
	return TestResult{}
}

// Summary is the verdict's message and diagnostics on one line.
func (v *Verdict) Summary() string {
	s := v.Message
	for _, d := range v.Diagnostics {
		s += fmt.Sprintf(" %s:%d: %s;", d.File, d.Line, d.Message)
	}
	return s
}
