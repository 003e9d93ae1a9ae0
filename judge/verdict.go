package judge

// A Verdict is the judge's answer for one submission. Its JSON form follows
// Exercism's results.json (version 3): an overall status and the tests in
// order. Everything in it is a function of the code, the exercise and the
// seed, so the same inputs give byte-identical JSON; wall-clock durations are
// kept out of the JSON for that reason.
type Verdict struct {
	Version  int    `json:"version"`           // always 3
	Status   Status `json:"status"`            // pass, fail or error
	Outcome  string `json:"outcome"`           // a named terminal state; see the Outcome constants
	Message  string `json:"message,omitempty"` // for compile and internal errors: what went wrong
	Exercise string `json:"exercise"`          // slug
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
	// Timings are wall-clock figures for people, never part of the JSON.
	Timings Timings `json:"-"`
}

// Timings are wall-clock durations in milliseconds.
type Timings struct {
	BuildMs, CompileMs, RunMs, TotalMs int64
	Cached                             bool // the module came from the cache
}

type Status string

const (
	StatusPass  Status = "pass"
	StatusFail  Status = "fail"
	StatusError Status = "error"
)

// Outcomes: every submission ends in exactly one.
const (
	OutcomeAccepted      = "accepted"       // every test passed
	OutcomeWrongAnswer   = "wrong_answer"   // some oracle failed
	OutcomeRuntimeError  = "runtime_error"  // a panic or a protocol violation
	OutcomeTimeout       = "timeout"        // the code did more steps of work than its budget
	OutcomeMemoryLimit   = "memory_limit"   // the module ran out of memory
	OutcomeOutputLimit   = "output_limit"   // the module wrote far too much output
	OutcomeCompileError  = "compile_error"  // the code did not build
	OutcomeInternalError = "internal_error" // the judge failed; the learner is not charged
	OutcomeNotJudged     = "not_judged"     // a wall-clock safety net fired: the machine was too busy; not charged, judged again
)

type Mode string

const (
	ModeRun    Mode = "run"    // samples only
	ModeSubmit Mode = "submit" // every test, faults included
)

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
	// Oracle names the check that failed: convergence, idempotency, safety,
	// writes, errors, budget, runtime, timeout, memory, output, setup.
	Oracle string `json:"oracle,omitempty"`
	// Message says in plain words what went wrong; Hint where to look.
	Message string `json:"message,omitempty"`
	Hint    string `json:"hint,omitempty"`
	// Faults lists, in plain words, the faults injected in this run.
	Faults []string `json:"faults,omitempty"`
	// FaultClasses are the short names of the fault kinds that fired
	// (restart, crash-after-write, duplicate, ...), for analytics.
	FaultClasses []string `json:"fault_classes,omitempty"`
	Seed         uint64   `json:"seed"`
	Replay       string   `json:"replay,omitempty"` // the command that replays this test
	// Output is what the controller logged (ctrl.Log, stdout, stderr),
	// capped; OutputTruncated says the cap was hit.
	Output          string `json:"output,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	// Trace is the compact story of the run's last steps.
	Trace []TraceLine `json:"trace,omitempty"`
	// Timeline is one point per step, for a picture of desired vs actual.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
	// Shrunk, for the first failing test, is the smallest set of its
	// planned faults that still fails it with the same oracle.
	Shrunk     *Shrunk `json:"shrunk,omitempty"`
	Reconciles int     `json:"reconciles"`
	Writes     int     `json:"writes"`
	DurationMs int64   `json:"-"`
}

// Shrunk is a failing test's smallest fault plan and how to replay it.
type Shrunk struct {
	Faults []string `json:"faults"` // may be empty: it fails without faults
	Replay string   `json:"replay"`
}

// TraceLine is one step of a run: at virtual time T (ms), Actor did Event.
type TraceLine struct {
	Step  int    `json:"step"`
	T     int64  `json:"t_ms"`
	Actor string `json:"actor"` // user, controller, kubelet, gc, fault
	Event string `json:"event"`
}

// TimelinePoint samples the world after a step.
type TimelinePoint struct {
	Step    int    `json:"step"`
	T       int64  `json:"t_ms"`
	Desired int    `json:"desired"`
	Actual  int    `json:"actual"`
	Ready   int    `json:"ready"`
	Mark    string `json:"mark,omitempty"` // write, fault, user, or empty
}

// Event is progress reported while judging, for live displays.
type Event struct {
	Phase string      `json:"phase"`           // compiling, running, test, done
	Index int         `json:"index,omitempty"` // 1-based test index for running and test
	Total int         `json:"total,omitempty"`
	Name  string      `json:"name,omitempty"`
	Test  *TestResult `json:"test,omitempty"`
}
