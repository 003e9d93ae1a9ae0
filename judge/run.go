package judge

import (
	"cmp"
	"context"
	"runtime"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// maxTestTime bounds one test in wall-clock time, MaxJudgeTime a whole
// submission. Both are safety nets, set far above what the step budgets
// allow on a loaded machine; when one fires the submission is not judged
// (OutcomeNotJudged), never failed.
const (
	maxTestTime  = 3 * time.Minute
	MaxJudgeTime = 10 * time.Minute
)

// maxReruns bounds the reruns of a test that passed: the sure points of
// its classes take at most sureWithin-1 (3) more runs, the aimed crash
// and server errors one each.
const maxReruns = 5

// runTest runs one test: seed the cluster, start the controller, apply the
// workload with faults, then a quiet phase, then the oracles.
func runTest(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string) verdict.TestResult {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, maxTestTime)
	defer cancel()
	// One budget for all the test's runs, so that no test costs more.
	steps := &sandbox.StepBudget{Max: MaxStepsPerTest}
	s := playTest(ctx, newCtl, ex, t, seed, fileName, nil, steps)
	// Seed-independent detection: a test that passed runs again with each
	// planned class's sure point at every place a seed could put it, then
	// with a crash and server errors aimed where none fell (see repin).
	// A test that passes every run shows the first in which each planned
	// class fired where it could: the seed's own run, unless it missed one.
	pins := newFaultPins()
	shown := s
	for round := 0; s.fail == nil && round < maxReruns && repin(s, pins, t.SeedFor(seed), round); round++ {
		s = playTest(ctx, newCtl, ex, t, seed, fileName, pins, steps)
		if len(shown.faults.missed()) > 0 && len(s.faults.missed()) == 0 {
			shown = s
		}
	}
	if s.fail != nil {
		shown = s
	}
	res := shown.result(ex, t, seed)
	res.DurationMs = time.Since(start).Milliseconds()
	res.Steps = steps.Used()
	return res
}

// playTest plays one run of a test, its fault plan pinned by pins. A run
// whose controller called a function pruned from its module
// (sandbox/prune.go) is played again on the whole module: the same run,
// since until that call the two modules do the same.
// Its steps are spent from the test's budget, but a run on a pruned
// module that had to be played again spends nothing: what pruning left
// out never costs the learner.
func playTest(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, pins *faultPins, steps *sandbox.StepBudget) *sim {
	trial := *steps
	s := playOnce(ctx, newCtl, ex, t, seed, fileName, pins, false, &trial)
	if s.pruned {
		return playOnce(ctx, newCtl, ex, t, seed, fileName, pins, true, steps)
	}
	*steps = trial
	return s
}

func playOnce(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, pins *faultPins, whole bool, steps *sandbox.StepBudget) *sim {
	s := newSim(ctx, newCtl, ex.Suite, t, t.SeedFor(seed))
	// Every test shares the submission's runtime choices, so that its
	// module starts once for them all, but a scenario that keeps its own
	// (printed from a verdict, kept as a regression).
	s.random = cmp.Or(t.Runtime, RuntimeKey(seed))
	s.steps = steps
	s.whole = whole
	s.fileName = fileName
	defer func() {
		if s.ctl != nil {
			s.ctl.close()
		}
	}()
	s.faults.pin(pins)
	s.faults.on = len(t.Faults) > 0
	d := s.startDifferential(ctx, ex, t, seed) // the reference solution's run, to compare with
	s.play(t)
	d.finish()
	return s
}

// runTests runs tests concurrently, one instance each, and reports them
// in order. The tests share the submission's budget of steps, spent in
// their order: once the tests before one have used it up, that one and
// those after it are not run.
func (e *Engine) runTests(ctx context.Context, mod *sandbox.Module, s Submission, tests []*exercise.Test, progress func(verdict.Event)) []verdict.TestResult {
	results := make([]verdict.TestResult, len(tests))
	done := make([]chan struct{}, len(tests))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	for i := range tests {
		done[i] = make(chan struct{})
	}
	// Tests start in their order, so that once the budget is spent only
	// those already running are stopped and thrown away.
	go func() {
		for i, t := range tests {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				defer close(done[i])
				if tctx.Err() == nil {
					results[i] = runTest(tctx, startWasm(e.rt, mod), s.Exercise, t, s.Seed, s.FileName)
				}
			}()
		}
	}()
	shrunk, used := false, 0
	var steps int64 // spent by the tests so far, in order
	spentBy := 0    // how many tests spent the budget; 0: not spent
	for i, t := range tests {
		if spentBy == 0 && steps >= MaxStepsPerSubmission {
			spentBy = i
		}
		if spentBy > 0 {
			// Those still running are stopped; what they did is not kept,
			// so the verdict does not depend on how far they got.
			stop()
			<-done[i]
			results[i] = notRun(t, s.Seed, steps, spentBy)
			used = keepWithin(&results[i], used, len(tests)-i-1)
			progress(verdict.Event{Phase: verdict.PhaseTest, Index: i + 1, Total: len(tests), Name: t.Name, Test: &results[i]})
			continue
		}
		progress(verdict.Event{Phase: verdict.PhaseRunning, Index: i + 1, Total: len(tests), Name: t.Name})
		<-done[i]
		steps += results[i].Steps
		if r := &results[i]; r.Status != verdict.StatusPass && !shrunk {
			// The first failure is the one a learner reads first: find the
			// fewest planned faults that still make it fail the same way.
			// It takes a slot like any test, so that no more instances
			// (each up to the sandbox's memory limit) run at once than
			// there are slots.
			shrunk = true
			sem <- struct{}{}
			var spent int64
			r.Shrunk, spent = shrink(ctx, startWasm(e.rt, mod), s.Exercise, t, s.Seed, s.FileName, r)
			steps += spent
			if r.Oracle != verdict.OracleNotJudged {
				var other bool
				other, spent = passesWithOtherChoices(ctx, startWasm(e.rt, mod), s.Exercise, t, s.Seed, s.FileName, r)
				steps += spent
				if other {
					r.Message = text.Clip(r.Message+" "+otherChoicesNote, text.MaxMessageBytes)
				}
			}
			<-sem
		}
		if r := &results[i]; r.Status != verdict.StatusPass && t.Generated && r.Scenario == "" && r.Oracle != verdict.OracleNotJudged {
			// A later failing scenario is printed as it ran.
			tc := *t
			tc.Seed, tc.Runtime = t.SeedFor(s.Seed), cmp.Or(t.Runtime, RuntimeKey(s.Seed))
			tc.Name = t.Name + ", seed " + strconv.FormatUint(s.Seed, 10)
			r.Scenario = tc.YAML()
		}
		used = keepWithin(&results[i], used, len(tests)-i-1)
		progress(verdict.Event{Phase: verdict.PhaseTest, Index: i + 1, Total: len(tests), Name: t.Name, Test: &results[i]})
	}
	return results
}

// notRun is the result of a test the submission's budget left no room
// for: the first n tests took steps of work in all.
func notRun(t *exercise.Test, seed uint64, steps int64, n int) verdict.TestResult {
	return verdict.TestResult{Name: t.Name, Status: verdict.StatusError, Sample: t.Sample, Oracle: verdict.OracleTimeout,
		Seed: t.SeedFor(seed),
		Message: "Not run: a submission may do " + text.Thousands(MaxStepsPerSubmission) + " steps of work, and the first " + text.Plural(n, "test") +
			" did " + text.Thousands(steps) + ". Make each Reconcile do less, then submit again."}
}

// result turns the run into a TestResult.
func (s *sim) result(ex *exercise.Exercise, t *exercise.Test, seed uint64) verdict.TestResult {
	r := verdict.TestResult{Name: t.Name, Status: verdict.StatusPass, Sample: t.Sample, Seed: seed,
		Reconciles: s.host.reconciles, Writes: len(s.rec.Writes)}
	r.Output = strings.ToValidUTF8(string(s.rec.Out.Buf), "\uFFFD")
	r.OutputTruncated = s.rec.Out.Truncated
	if i := strings.Index(r.Output, "\ngoroutine "); i >= 0 && s.fail != nil {
		// The Go runtime's dump of every goroutine: the message already
		// has the panic and the learner's frames.
		r.Output = r.Output[:i+1] + "(the Go runtime's traceback is left out; the message above has your frames)\n"
	}
	r.FaultClasses = s.faults.classes()
	if s.fail == nil {
		return r
	}
	r.Status = s.fail.oracle.Status()
	r.Oracle = s.fail.oracle
	r.Message = s.fail.message
	r.Violation = s.fail.violation
	r.Hint = r.Oracle.Hint()
	// A model may word a hint for its own exercise family.
	if h, ok := s.model.(family.Hinter); ok && h.Hint(r.Oracle) != "" {
		r.Hint = h.Hint(r.Oracle)
	}
	r.Faults = s.faults.log
	r.Replay = exercise.ReplayCommand(ex, t.Name, seed)
	r.Trace = s.rec.TraceTail()
	r.Timeline = s.rec.TimelineTail()
	return r
}

// otherChoices is how many other runtime keys a failing test is tried
// under.
const otherChoices = 2

// otherChoicesNote is what a failure adds when the same test passes under
// other runtime choices.
const otherChoicesNote = "With other choices of the Go runtime (the order a range over a map visits, the case a select takes), " +
	"the same test passes: what your controller does depends on them, and the statement asks for one result whatever they are. " +
	"Look for a range over a map whose order decides what you write or return."

// passesWithOtherChoices runs a failing test again, as it ran but under
// other runtime keys drawn from its seed, and says whether one of the
// runs passed: then the failure came from the runtime's choices, not
// from the world's. A run the clock stopped makes the failing result not
// judged (as a shrink trial's does), since the note would depend on the
// load.
func passesWithOtherChoices(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, failed *verdict.TestResult) (passed bool, steps int64) {
	for k := range otherChoices {
		key := cmp.Or(exercise.TestSeed(t.SeedFor(seed), "other runtime choices "+strconv.Itoa(k)), 1)
		other := *t
		other.Runtime = key
		r := runTest(ctx, newCtl, ex, &other, seed, fileName)
		steps += r.Steps
		switch {
		case r.Oracle == verdict.OracleNotJudged:
			failed.Oracle = verdict.OracleNotJudged
			return false, steps
		case r.Status == verdict.StatusPass:
			return true, steps
		}
	}
	return false, steps
}
