package judge

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// The learner's controller process: started in the sandbox, with the
// host as its only way out, and its traps turned into the oracle they fail.

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
			Output: s.rec.Out, MaxOutputBytes: cluster.MaxOutputFlood, Clock: s.clock.Time, Sleep: s.sleep})
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
