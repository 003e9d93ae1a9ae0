package verdict

// The words in this file are read by learners and instructors: keep them
// plain and kind, and say what to do where there is something to do.

// Status is whether a verdict or a test passed.
type Status string

const (
	StatusPass  Status = "pass"  // it did what it should
	StatusFail  Status = "fail"  // an oracle found a mistake
	StatusError Status = "error" // it could not be run to the end
)

// Statuses lists every Status.
var Statuses = []Status{StatusPass, StatusFail, StatusError}

var statusWords = map[Status][2]string{
	StatusPass:  {"Passed", "The code did what the test asks."},
	StatusFail:  {"Failed", "A check found the cluster in a state it should not be in."},
	StatusError: {"Error", "The code stopped or hit a limit before the test could finish."},
}

// Title is the status in a word or two.
func (s Status) Title() string { return word(statusWords, s, 0) }

// Explain says what the status means, in a sentence.
func (s Status) Explain() string { return word(statusWords, s, 1) }

// Mode is how much of an exercise a submission runs.
type Mode string

const (
	ModeRun    Mode = "run"    // samples only
	ModeSubmit Mode = "submit" // every test, faults included
)

// Modes lists every Mode.
var Modes = []Mode{ModeRun, ModeSubmit}

var modeWords = map[Mode][2]string{
	ModeRun:    {"Run", "Only the sample tests, without faults: a quick look before you submit."},
	ModeSubmit: {"Submit", "Every test, with faults injected: this is what counts."},
}

// Title is the mode in a word.
func (m Mode) Title() string { return word(modeWords, m, 0) }

// Explain says what the mode runs, in a sentence.
func (m Mode) Explain() string { return word(modeWords, m, 1) }

// Outcome is the named terminal state of a submission: every submission
// ends in exactly one.
type Outcome string

const (
	OutcomeAccepted      Outcome = "accepted"       // every test passed
	OutcomeWrongAnswer   Outcome = "wrong_answer"   // some oracle failed
	OutcomeRuntimeError  Outcome = "runtime_error"  // a panic or a protocol violation
	OutcomeTimeout       Outcome = "timeout"        // the code did more steps of work than its budget
	OutcomeMemoryLimit   Outcome = "memory_limit"   // the module ran out of memory
	OutcomeOutputLimit   Outcome = "output_limit"   // the module wrote far too much output
	OutcomeCompileError  Outcome = "compile_error"  // the code did not build
	OutcomeInternalError Outcome = "internal_error" // the judge failed; the learner is not charged
	OutcomeNotJudged     Outcome = "not_judged"     // a wall-clock safety net fired: not charged, judged again
)

// Outcomes lists every Outcome.
var Outcomes = []Outcome{OutcomeAccepted, OutcomeWrongAnswer, OutcomeRuntimeError, OutcomeTimeout,
	OutcomeMemoryLimit, OutcomeOutputLimit, OutcomeCompileError, OutcomeInternalError, OutcomeNotJudged}

var outcomeWords = map[Outcome][2]string{
	OutcomeAccepted:      {"Accepted", "Every test passed, faults and all. Well done."},
	OutcomeWrongAnswer:   {"Wrong answer", "Your controller ran, but a check found the cluster in a state it should not be in."},
	OutcomeRuntimeError:  {"Runtime error", "Your controller panicked, exited, or used the SDK in a way it does not allow."},
	OutcomeTimeout:       {"Time limit exceeded", "Your code did more work than the limit allows (an endless loop?)."},
	OutcomeMemoryLimit:   {"Memory limit exceeded", "Your controller used more memory than it is allowed."},
	OutcomeOutputLimit:   {"Output limit exceeded", "Your controller printed far more output than it is allowed."},
	OutcomeCompileError:  {"Compile error", "Your code did not build; the messages point at the lines to fix."},
	OutcomeInternalError: {"Judge error", "The judge itself went wrong. It is not your fault, and this attempt was not counted."},
	OutcomeNotJudged:     {"Not judged", "The judge was too busy, or was stopped, before it could decide. This attempt was not counted and will be tried again."},
}

// Title is the outcome as a page or a report heads it.
func (o Outcome) Title() string { return word(outcomeWords, o, 0) }

// Explain says what the outcome means, in a sentence.
func (o Outcome) Explain() string { return word(outcomeWords, o, 1) }

// Charged says whether the outcome counts as an attempt: it does unless
// the judge failed or never decided.
func (o Outcome) Charged() bool { return o != OutcomeInternalError && o != OutcomeNotJudged }

// Oracle names the check that failed a test.
type Oracle string

const (
	OracleConvergence Oracle = "convergence" // the cluster did not settle in the desired state
	OracleIdempotency Oracle = "idempotency" // a settled cluster was changed again
	OracleSafety      Oracle = "safety"      // a safety bound was crossed
	OracleWrites      Oracle = "writes"      // the writes differ from the expected ones
	OracleReference   Oracle = "reference"   // the run differs from the reference solution's where the statement decides
	OracleErrors      Oracle = "errors"      // Reconcile kept returning errors at rest
	OracleBudget      Oracle = "budget"      // too many reconciles, or calls in one
	OracleRuntime     Oracle = "runtime"     // a panic, an exit, a protocol violation
	OracleTimeout     Oracle = "timeout"     // more steps of work than the budget
	OracleMemory      Oracle = "memory"      // out of memory
	OracleOutput      Oracle = "output"      // far too much output
	OracleSetup       Oracle = "setup"       // the test itself is broken
	// The rules a statement may make about every call (exercise.Rules).
	OracleWritesPerCall     Oracle = "writes_per_call"    // one call stored more writes than the statement allows
	OracleMadeUpError       Oracle = "made_up_error"      // an error returned although no API call failed
	OracleSwallowedConflict Oracle = "swallowed_conflict" // a write lost to a Conflict, and no error returned
	OracleSwallowedError    Oracle = "swallowed_error"    // an API call failed with a server error, and no error returned
	OracleRequeue           Oracle = "requeue"            // a requeue asked for where the statement says none
	OracleForeignMetadata   Oracle = "foreign_metadata"   // a write lost metadata that another actor had set
	// OracleNotJudged marks a test a wall-clock safety net stopped. It
	// never reaches a stored verdict: the whole submission becomes
	// OutcomeNotJudged.
	OracleNotJudged Oracle = "not_judged"
)

// Oracles lists every Oracle.
var Oracles = []Oracle{OracleConvergence, OracleIdempotency, OracleSafety, OracleWrites, OracleReference, OracleErrors,
	OracleWritesPerCall, OracleMadeUpError, OracleSwallowedConflict, OracleSwallowedError, OracleRequeue, OracleForeignMetadata, OracleBudget, OracleRuntime, OracleTimeout, OracleMemory, OracleOutput, OracleSetup, OracleNotJudged}

var oracleWords = map[Oracle][3]string{
	OracleConvergence: {"Convergence",
		"Once the faults stopped, the cluster did not settle in the desired state.",
		"Reconcile must keep taking steps until the cluster matches the spec: check which rule should have fired in the state shown last."},
	OracleIdempotency: {"Idempotency",
		"Reconciling a cluster that had already settled changed it again.",
		"Once the cluster matches the spec, Reconcile must write nothing: decide from what you read, and compare before writing."},
	OracleSafety: {"Safety",
		"A safety bound was crossed while the controller worked.",
		"Check the bounds before every write, and take at most one step per call: the next event brings you back."},
	OracleWrites: {"Expected writes",
		"The controller's writes differ from the ones the test expects.",
		"Compare your writes with the expected ones: one step per call, chosen by the rules in order."},
	OracleReference: {"Differs from the reference",
		"Run on the same test and seed, the reference solution chose another object, or left the cluster different, where the statement says what to do.",
		"Reread the rule that decides this write or this field: which object it picks (first or last, by name), and what a new or updated object carries (labels, owner reference, annotations, finalizers). Only what the statement leaves free may differ."},
	OracleErrors: {"Errors at rest",
		"Reconcile kept returning an error after the cluster had gone quiet.",
		"Return an error only for something a retry can fix; a Deployment that is gone (NotFound) is not one."},
	OracleWritesPerCall: {"Writes per call",
		"One Reconcile call made more writes than the exercise allows.",
		"Take one step and return: the event your write causes brings the controller back for the next one."},
	OracleMadeUpError: {"Made-up error",
		"Reconcile returned an error although none of its calls to the cluster had failed.",
		"Return an error only to pass on one the cluster gave you; to be called again, rely on the events your writes cause."},
	OracleSwallowedConflict: {"Swallowed conflict",
		"A write failed with a Conflict, and Reconcile returned no error, as if it had worked.",
		"A Conflict means your write did not happen: return the error (or read again and retry), never nil."},
	OracleSwallowedError: {"Swallowed error",
		"A call to the cluster failed with a server error, and Reconcile returned no error, as if it had worked.",
		"After any error other than the ones your rules handle (such as NotFound), return it: the request comes back with growing delays until the cluster answers."},
	OracleRequeue: {"Requeue",
		"Reconcile asked to be called again (RequeueAfter) where the exercise says it never should.",
		"Return an empty ctrl.Result: the events of the objects you watch bring the controller back when something changes."},
	OracleForeignMetadata: {"Others' metadata",
		"A write of the controller removed or changed a label, annotation, finalizer or owner reference that someone else had set.",
		"Edit the maps and lists you read (add or delete your own key) instead of replacing them, and write from a fresh read: after a Conflict, read the object again rather than copying the new resourceVersion onto your old copy."},
	OracleBudget: {"Reconcile budget",
		"The controller needed more reconciles, or more calls in one reconcile, than the test allows.",
		"Something kept the controller busy: a write that triggers itself, or a requeue with nothing left to do."},
	OracleRuntime: {"Runtime",
		"The controller panicked, exited, or broke the SDK's rules.",
		"The message shows where your code stopped."},
	OracleTimeout: {"Time limit",
		"Your code did more work than the limit allows (an endless loop?).",
		"A loop that never ends, or heavy work in every call? Work in the library (sorting, hashing, formatting) counts too; look where the steps ran out."},
	OracleMemory: {"Memory",
		"The controller ran out of memory.",
		"Something grows without bound: a slice or map that is never reset?"},
	OracleOutput: {"Output",
		"The controller printed far more output than it is allowed.",
		"Log a line per decision, not per loop iteration."},
	OracleSetup: {"Test setup",
		"The test itself could not be set up: a mistake in the exercise, not in your code.",
		"There is nothing to change in your code; please tell the exercise's author."},
	OracleNotJudged: {"Not judged",
		"The judge ran out of real time before your code ran out of work: the machine was too busy.",
		"There is nothing to change in your code; it will be judged again."},
}

// Title is the oracle's name as a heading.
func (o Oracle) Title() string { return word(oracleWords, o, 0) }

// Explain says what a failure of the oracle means, in a sentence.
func (o Oracle) Explain() string { return word(oracleWords, o, 1) }

// Hint points a learner at the usual cause of a failure of the oracle.
// An exercise's model may word a better one for its own family.
func (o Oracle) Hint() string { return word(oracleWords, o, 2) }

// Outcome is the outcome of a submission whose first failing test failed
// this oracle.
func (o Oracle) Outcome() Outcome {
	switch o {
	case OracleRuntime:
		return OutcomeRuntimeError
	case OracleTimeout:
		return OutcomeTimeout
	case OracleMemory:
		return OutcomeMemoryLimit
	case OracleOutput:
		return OutcomeOutputLimit
	case OracleSetup:
		return OutcomeInternalError
	case OracleNotJudged:
		return OutcomeNotJudged
	}
	return OutcomeWrongAnswer
}

// Status is the status of a test this oracle failed: StatusFail when the
// code ran to the end and was found wrong, StatusError when it never got
// there.
func (o Oracle) Status() Status {
	if o.Outcome() == OutcomeWrongAnswer {
		return StatusFail
	}
	return StatusError
}

// Fault is a class of fault a test may inject.
type Fault string

const (
	FaultRestart      Fault = "restart"           // controller restarted between reconciles
	FaultCrashAfter   Fault = "crash-after-write" // controller killed right after a write, then restarted
	FaultDuplicate    Fault = "duplicate"         // a key reconciled again with nothing changed
	FaultCoalesce     Fault = "coalesce"          // consecutive workload steps delivered as one
	FaultMissedEvent  Fault = "missed-event"      // a watch event never reaches the queue
	FaultPodFailure   Fault = "pod-failure"       // a Pod turns Failed
	FaultManualDelete Fault = "manual-delete"     // a user deletes a Pod
	FaultStaleRead    Fault = "stale-read"        // the cache lags the controller's own writes by a reconcile
	FaultConflict     Fault = "conflict"          // another writer changes the object first; the update meets a real 409
	FaultServerError  Fault = "server-error"      // an API call fails for a moment with 500 or 503
)

// Faults lists every Fault, in the order verdicts name them.
var Faults = []Fault{FaultRestart, FaultCrashAfter, FaultDuplicate, FaultCoalesce,
	FaultMissedEvent, FaultPodFailure, FaultManualDelete, FaultStaleRead, FaultConflict, FaultServerError}

var faultWords = map[Fault][2]string{
	FaultRestart:      {"Restart", "A restart loses everything the controller kept in memory; Reconcile must work from what it reads."},
	FaultCrashAfter:   {"Crash after a write", "A crash right after a write leaves the job half done; the next Reconcile must pick up from the cluster as it is."},
	FaultDuplicate:    {"Duplicate request", "The same request may arrive again with nothing changed; a second call must make no extra writes."},
	FaultCoalesce:     {"Coalesced changes", "Several changes may arrive as one; Reconcile must act on the latest state, not on each change."},
	FaultMissedEvent:  {"Missed event", "An event may never arrive; the periodic resync calls Reconcile anyway, and it must still do the right thing."},
	FaultPodFailure:   {"Pod failure", "A Pod can fail on its own; the controller must replace it."},
	FaultManualDelete: {"Manual delete", "Someone can delete a Pod by hand; the controller must notice and heal."},
	FaultStaleRead:    {"Stale read", "The cache may not show the controller's own last write yet."},
	FaultConflict:     {"Conflict", "Another writer changes the object just before an update, which then fails with a Conflict; read the object again and retry, or return the error, but never write your old copy over the other writer's change."},
	FaultServerError:  {"Server error", "A call to the API server can fail for a moment (500 InternalError, 503 ServiceUnavailable) and read or write nothing; return the error so that the request is tried again, never carry on as if the call had worked."},
}

// Title is the fault class in a few words.
func (f Fault) Title() string { return word(faultWords, f, 0) }

// Explain says what the fault class tests, for learners.
func (f Fault) Explain() string { return word(faultWords, f, 1) }

// Known says whether f is one of Faults.
func (f Fault) Known() bool { _, ok := faultWords[f]; return ok }

// Phase is a stage of judging, reported in Events.
type Phase string

const (
	PhaseCompiling Phase = "compiling" // building the code
	PhaseRunning   Phase = "running"   // a test has started
	PhaseTest      Phase = "test"      // a test has finished; Event.Test holds it
	PhaseDone      Phase = "done"      // the verdict is ready
)

// Phases lists every Phase.
var Phases = []Phase{PhaseCompiling, PhaseRunning, PhaseTest, PhaseDone}

var phaseWords = map[Phase][2]string{
	PhaseCompiling: {"Compiling", "Building your code."},
	PhaseRunning:   {"Running", "Running a test against the simulated cluster."},
	PhaseTest:      {"Test finished", "A test has finished and its result is in."},
	PhaseDone:      {"Done", "Judging is over and the verdict is ready."},
}

// Title is the phase in a word or two.
func (p Phase) Title() string { return word(phaseWords, p, 0) }

// Explain says what is happening in the phase.
func (p Phase) Explain() string { return word(phaseWords, p, 1) }

// Mark tags a step of a timeline with what happened at it. When several
// things happen at one step, the highest Rank is kept.
type Mark string

const (
	MarkNone  Mark = ""      // nothing worth marking
	MarkUser  Mark = "user"  // the test changed the cluster
	MarkWrite Mark = "write" // the controller wrote
	MarkFault Mark = "fault" // the judge injected a fault
)

// Marks lists every Mark but MarkNone, lowest rank first.
var Marks = []Mark{MarkUser, MarkWrite, MarkFault}

var markWords = map[Mark][2]string{
	MarkUser:  {"User change", "The test changed the cluster here, as a user would."},
	MarkWrite: {"Write", "Your controller wrote to the cluster here."},
	MarkFault: {"Fault", "The judge injected a fault here."},
}

// Title is the mark in a word or two.
func (m Mark) Title() string { return word(markWords, m, 0) }

// Explain says what happened at a step with this mark.
func (m Mark) Explain() string { return word(markWords, m, 1) }

// Rank orders marks: a fault outranks a write, a write a user's change.
func (m Mark) Rank() int {
	for i, x := range Marks {
		if x == m {
			return i + 1
		}
	}
	return 0
}

// word is the i-th word of k, or k itself when it has none, so an unknown
// name (from an older verdict, say) still shows as something.
func word[K ~string, W [2]string | [3]string](m map[K]W, k K, i int) string {
	if w, ok := m[k]; ok && w[i] != "" {
		return w[i]
	}
	return string(k)
}
