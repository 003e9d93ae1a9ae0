package judge

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// The learner's controller process: started in the sandbox, with the
// host as its only way out, run one Reconcile at a time, restarted when a
// fault says so, and its traps turned into the oracle they fail.

// controller is the learner's controller process.
type controller interface {
	// reconcile runs Reconcile once; an error is a *sandbox.Trap.
	reconcile(ctx context.Context) error
	close()
}

// wasmController runs the learner's module in the sandbox.
type wasmController struct{ inst *sandbox.Instance }

// startWasm starts controllers from a compiled module: each start is a
// fresh instance, metered against the test's one step budget, so a
// restart wipes memory but not the work already done.
func startWasm(rt *sandbox.Runtime, mod *sandbox.Module) func(*sim) (controller, error) {
	return func(s *sim) (controller, error) {
		mod := mod
		if s.whole {
			var err error
			if mod, err = rt.Whole(s.ctx, mod); err != nil {
				return nil, err
			}
		}
		inst, err := mod.Instantiate(s.ctx, rt, s.host, sandbox.Limits{
			CallSteps: MaxStepsPerReconcile, Steps: s.steps, CallTimeout: reconcileWallNet,
			Output: s.rec.Out, MaxOutputBytes: cluster.MaxOutputFlood, Clock: s.clock.Time, Sleep: s.sleep, Random: s.random})
		if err != nil {
			return nil, err
		}
		res, err := inst.Call(s.ctx, "ctrljudge_abi_version")
		if err != nil {
			return nil, err
		}
		if len(res) != 1 || int32(res[0]) != ctrl.ABIVersion {
			inst.Close(s.ctx)
			return nil, &sandbox.Trap{Kind: sandbox.TrapProtocol, Message: "the module was built against another version of the SDK"}
		}
		return &wasmController{inst}, nil
	}
}

// RuntimeKey is the key of the random bytes a controller's Go runtime
// reads (sandbox.Limits.Random), and so of its map order, hash seeds,
// select choices and math/rand, in a submission judged at seed: every
// test shares it, so that the module starts once for them all and is
// copied after (sandbox/snapshot.go); a scenario printed from a verdict
// keeps it (Test.Runtime), so that it replays the same choices. Every
// restart and shrink trial of a test, and the reference solution's run of
// it, meet the same choices. Never 0, the sandbox's fixed stream of
// callers that choose none.
func RuntimeKey(seed uint64) uint64 {
	return cmp.Or(exercise.TestSeed(seed, "the controller's random bytes"), 1)
}

func (w *wasmController) reconcile(ctx context.Context) error {
	_, err := w.inst.Call(ctx, "ctrljudge_reconcile")
	return err
}

func (w *wasmController) close() { w.inst.Close(context.Background()) }

// trapped turns a reconcile that did not return into the test's failure.
func (s *sim) trapped(err error) {
	var trap *sandbox.Trap
	if !errors.As(err, &trap) {
		if s.ctx.Err() != nil {
			s.notJudged()
			return
		}
		s.failf(verdict.OracleRuntime, "The judge could not run your controller: "+err.Error())
		return
	}
	if errors.Is(trap.Err, errStop) {
		return // an oracle already failed
	}
	switch trap.Kind {
	case sandbox.TrapPruned:
		// Not the learner's doing: playTest runs the test again on the
		// whole module, and this run is dropped.
		s.pruned = true
		s.failf(verdict.OracleNotJudged, "The controller needed code compiled out of its module.")
	case sandbox.TrapPanic:
		s.failf(verdict.OracleRuntime, "Your controller panicked: "+text.LearnerStack(trap.Message, learnerFrames(trap.Stack, s.fileName)))
	case sandbox.TrapFuel:
		if trap.Total {
			s.failf(verdict.OracleTimeout, "Your controller did more than "+text.Thousands(trap.Steps)+" steps of work in this test, in "+
				text.Plural(s.host.reconciles, "reconcile")+": each call is too slow, even if it ends."+stepsWhere(trap.Stack))
		} else if s.starting {
			s.failf(verdict.OracleTimeout, "Your controller's start — its package's variables and init functions, before any Reconcile — did more than "+
				text.Thousands(trap.Steps)+" steps of work (an endless loop?)."+stepsWhere(trap.Stack))
		} else {
			s.failf(verdict.OracleTimeout, "Reconcile #"+strconv.Itoa(s.host.n)+" did more than "+text.Thousands(trap.Steps)+" steps of work (an endless loop?)."+stepsWhere(trap.Stack))
		}
	case sandbox.TrapTimeout:
		s.notJudged()
	case sandbox.TrapOutput:
		s.failf(verdict.OracleOutput, "Your controller wrote too much output: "+trap.Message+". Log less, or only when something changes.")
	case sandbox.TrapOutOfMemory:
		s.failf(verdict.OracleMemory, "Your controller ran out of memory: "+trap.Message+".")
	case sandbox.TrapExit:
		s.failf(verdict.OracleRuntime, "Your controller stopped the program: "+trap.Message+". Return from Reconcile instead of exiting.")
	case sandbox.TrapHost:
		s.failf(verdict.OracleRuntime, "Your controller sent the judge a request it could not understand: "+trap.Message)
	default:
		s.failf(verdict.OracleRuntime, "Your controller stopped: "+trap.Message)
	}
}

// stepsWhere says where a call was when its steps ran out, from the
// module's stack, innermost first: in the learner's own code, or in the
// library called from it.
func stepsWhere(stack []string) string {
	var mine string
	for _, f := range stack {
		if strings.HasPrefix(f, "main.") && f != "main.main" {
			mine = f
			break
		}
	}
	if len(stack) == 0 {
		return ""
	}
	switch inner := stack[0]; {
	case inner == mine:
		return " It was in your " + funcName(mine) + " when they ran out."
	case mine != "":
		return " It was inside " + funcName(inner) + ", called from your " + funcName(mine) + ", when they ran out: library code counts as your own."
	default:
		return " It was inside " + funcName(inner) + " when they ran out."
	}
}

// funcName writes a name from the module's name section much as Go
// does: the linker wrote an underscore for every character but letters,
// digits and dots, so a package path's slashes and a method's (*T) come
// back from their usual places.
func funcName(f string) string {
	pkg, fn, ok := strings.Cut(f, ".")
	if !ok {
		return f
	}
	if strings.HasPrefix(fn, "__") {
		if t, m, ok := strings.Cut(fn[2:], "_."); ok {
			fn = "(*" + t + ")." + m
		}
	}
	if pkg == "main" {
		if strings.HasPrefix(fn, "init.") {
			return "init"
		}
		return fn
	}
	return strings.ReplaceAll(pkg, "_", "/") + "." + fn
}

// learnerFrames keeps the stack frames in the learner's own code, naming
// the file as the learner does.
func learnerFrames(stack []string, fileName string) []string {
	var out []string
	for _, f := range stack {
		if strings.HasPrefix(f, "main.") && !strings.Contains(f, glueFile) {
			f = strings.ReplaceAll(f, "workspace/"+learnerPath, fileName)
			out = append(out, "    at "+f)
		}
	}
	return out
}

// restart discards the controller's instance: everything it held in memory
// is gone. The next reconcile starts a fresh one, as a new process would,
// with a fresh cache and every object enqueued.
func (s *sim) restart() {
	if s.ctl != nil {
		s.ctl.close()
		s.ctl = nil
	}
	s.rec.Out.WriteString("--- controller restarted ---\n")
	// The new process has returned no error yet: a key whose object is
	// gone by now is never reconciled again, and its old error says
	// nothing of the controller at rest.
	clear(s.lastErr)
	s.queue.Reset()
	s.inf.Resync(s.api)
	s.enqueueAll()
}

// sleep is the controller waiting inside a call (time.Sleep, a timer):
// the cluster's time passes as it waits, and no real time does.
func (s *sim) sleep(d time.Duration) {
	s.slept += d
	s.clock.AdvanceTo(s.clock.Now + d)
}

// reconcile runs the learner's Reconcile once for key.
func (s *sim) reconcile(key string) {
	h := s.host
	h.begin(key)
	s.rec.Logf("controller", "reconcile ", key, " (#", strconv.Itoa(h.n), ")")
	if s.ctl == nil {
		s.starting = true
		ctl, err := s.newController(s)
		if err != nil {
			s.queue.Done(key)
			s.trapped(err)
			s.starting = false
			return
		}
		s.starting = false
		s.ctl = ctl
	}
	s.slept = 0
	before := s.clock.Now
	err := s.ctl.reconcile(s.ctx)
	switch {
	case err != nil:
		// The Go runtime pauses on its way down after a panic; a call
		// that never returned took no time of the world's.
		s.clock.Now = before
	case s.slept > 0:
		s.rec.Logf("controller", "waited ", s.slept.String(), " of virtual time in that call")
	}
	s.queue.Done(key)
	if err != nil {
		s.ctl = nil // a trapped instance is discarded
		var trap *sandbox.Trap
		if errors.As(err, &trap) && errors.Is(trap.Err, errCrash) {
			// A crashed call returned no error: an earlier one must not
			// outlive it, or a key whose object the crashed call deleted
			// (and so never reconciled again) would seem to fail at rest.
			s.lastErr[key] = ""
			s.inf.Crashed()
			s.restart()
			return
		}
		s.trapped(err)
		return
	}
	if r := h.result; r == nil {
		s.failf(verdict.OracleRuntime, "Reconcile returned without reporting a result to the judge.")
	} else if s.brokeRules(key, r) {
		return
	} else if s.diff.returned(key, r); r.HasError {
		s.lastErr[key] = text.Clip(r.Text, text.MaxErrorText)
		d := s.queue.AddRateLimited(key, s.clock.Now)
		s.rec.Logf("controller", "returned error: ", text.Clip(r.Text, text.MaxTraceText), " (retry in ", d.String(), ")")
	} else {
		s.lastErr[key] = ""
		s.queue.Forget(key)
		if r.RequeueAfter > 0 {
			s.queue.AddAfter(key, s.clock.Now, r.RequeueAfter)
			s.rec.Logf("controller", "done, requeue after ", r.RequeueAfter.String())
		} else if h.writes == 0 {
			s.rec.Logf("controller", "done, no writes")
		}
	}
	s.afterReconcile(key)
}

// afterReconcile delivers the reconcile's own events and injects the
// faults that happen between reconciles.
func (s *sim) afterReconcile(key string) {
	n := strconv.Itoa(s.host.n)
	s.gcHeld = false
	if s.inf.Reconciled(func() bool { return s.faults.maybe(verdict.FaultStaleRead) }) {
		s.noteFault(verdict.FaultStaleRead, "Your controller's cache will not show its own writes from reconcile #"+n+" until after its next reconcile.")
	}
	s.Sample(verdict.MarkNone)
	if s.faults.maybe(verdict.FaultRestart) {
		s.noteFault(verdict.FaultRestart, "Restarted your controller after reconcile #"+n+" of "+key+": its memory was wiped.")
		s.restart()
		return
	}
	// An opportunity is one where nothing else is about to bring the key
	// back: it is not queued, and no event on its way maps to it (a write's
	// own event, unless a stale read holds it back). Otherwise the queue
	// would swallow the duplicate, which would count as tested without
	// being.
	if !s.queue.Waiting(key) && !s.eventPendingFor(key) && s.faults.maybe(verdict.FaultDuplicate) {
		s.noteFault(verdict.FaultDuplicate, "Delivered "+key+" again with nothing changed after reconcile #"+n+".")
		s.queue.Add(key)
	}
}

// eventPendingFor says whether an event taken and not yet delivered will
// queue key.
func (s *sim) eventPendingFor(key string) bool {
	for _, ev := range s.inf.Pending() {
		if slices.Contains(s.requestsFor(ev.Object), key) {
			return true
		}
	}
	return false
}
