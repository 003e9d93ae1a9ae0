package judge

import (
	"context"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// The server-error fault and the rule that its failures are passed on
// (Rules.PassOnErrors, oracle swallowed_error), on native controllers.

var passOnErrors = exercise.Rules{WritesPerCall: 1, NoMadeUpErrors: true, PassOnErrors: true, NoRequeue: true}

// intercepting is a client that hands each Get, List, Create and Delete,
// named by kind ("get", "list", "create", "delete"), to around.
type intercepting struct {
	ctrl.Client
	around func(call string, do func() error) error
}

func (c intercepting) Get(ctx context.Context, key ctrl.ObjectKey, obj ctrl.Object) error {
	return c.around("get", func() error { return c.Client.Get(ctx, key, obj) })
}

func (c intercepting) List(ctx context.Context, list ctrl.ObjectList, opts ...ctrl.ListOption) error {
	return c.around("list", func() error { return c.Client.List(ctx, list, opts...) })
}

func (c intercepting) Create(ctx context.Context, obj ctrl.Object) error {
	return c.around("create", func() error { return c.Client.Create(ctx, obj) })
}

func (c intercepting) Delete(ctx context.Context, obj ctrl.Object) error {
	return c.around("delete", func() error { return c.Client.Delete(ctx, obj) })
}

// swallowing answers nil where a call of kind kind ("any" for all) failed
// with anything but NotFound: the mistake of an `if err != nil` on the
// wrong side. With retry, it makes a failed call once more instead, which
// is fine.
func swallowing(c ctrl.Client, kind string, retry bool) ctrl.Client {
	return intercepting{c, func(call string, do func() error) error {
		err := do()
		if err == nil || ctrl.IsNotFound(err) || call != kind && kind != "any" {
			return err
		}
		if retry {
			return do()
		}
		return nil
	}}
}

// failures counts in seen, by kind of call, the server errors its
// controller meets.
func failures(c ctrl.Client, seen map[string]int) ctrl.Client {
	return intercepting{c, func(call string, do func() error) error {
		err := do()
		if ctrl.IsInternalError(err) || ctrl.IsServiceUnavailable(err) {
			seen[call]++
		}
		return err
	}}
}

func withClient(wrap func(ctrl.Client) ctrl.Client) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			return inner(ctx, wrap(c), req)
		}
	}
}

// A correct controller passes at every seed, and between the first run
// and the rerun that aims at the kinds it missed, every kind of call the
// controller makes meets a server error.
func TestServerErrorsReachEveryKindOfCall(t *testing.T) {
	objs, steps := rollout()
	for seed := uint64(1); seed <= 5; seed++ {
		seen := map[string]int{}
		r := run(withRules(suite(t, objs, steps, "server-error", ""), passOnErrors), seed,
			withClient(func(c ctrl.Client) ctrl.Client { return failures(c, seen) }))
		mustPass(t, r)
		for _, call := range []string{"get", "list", "create", "delete"} {
			if seen[call] == 0 {
				t.Errorf("seed %d: no server error hit a %s (%v)", seed, call, seen)
			}
		}
	}
}

// Dropping the failure of any one kind of call is caught at every seed
// (a dropped write's as swallowed_error, a dropped read's perhaps by the
// unsafe write it leads to), and making the call again within the same Reconcile is not dropping it.
func TestSwallowedServerErrorsAreCaught(t *testing.T) {
	objs, steps := rollout()
	for _, call := range []string{"get", "list", "create", "delete"} {
		t.Run(call, func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				ex := withRules(suite(t, objs, steps, "server-error", ""), passOnErrors)
				r := run(ex, seed, withClient(func(c ctrl.Client) ctrl.Client { return swallowing(c, call, false) }))
				switch {
				case r.Oracle == verdict.OracleSwallowedError:
					if !strings.Contains(r.Message, "failed with a server error, and the call returned no error") {
						t.Errorf("seed %d: message %q", seed, r.Message)
					}
				case r.Oracle == verdict.OracleSafety && (call == "get" || call == "list"):
					// Carrying on from an empty read may break a bound
					// before the call returns: caught all the same.
				default:
					t.Fatalf("seed %d: got %s %q: %s", seed, r.Status, r.Oracle, r.Message)
				}
				mustPass(t, run(ex, seed, withClient(func(c ctrl.Client) ctrl.Client { return swallowing(c, call, true) })))
			}
		})
	}
}

// Without the rule, dropping a server error is judged by its effects
// only; the rule's oracle never speaks.
func TestSwallowedServerErrorsWithoutTheRule(t *testing.T) {
	objs, steps := rollout()
	for seed := uint64(1); seed <= 3; seed++ {
		r := run(suite(t, objs, steps, "server-error", ""), seed, withClient(func(c ctrl.Client) ctrl.Client { return swallowing(c, "any", false) }))
		if r.Oracle == verdict.OracleSwallowedError {
			t.Fatalf("seed %d: swallowed_error without the rule: %s", seed, r.Message)
		}
	}
}

// Asking to be called again instead of returning a server error is
// swallowing it, unless the exercise says a requeue answers an error too
// (173's statement does).
func TestRequeueInsteadOfAServerError(t *testing.T) {
	objs, steps := rollout()
	requeueing := func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			r, err := inner(ctx, c, req)
			if ctrl.IsInternalError(err) || ctrl.IsServiceUnavailable(err) {
				return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
			}
			return r, err
		}
	}
	strict := passOnErrors
	strict.NoRequeue = false
	lenient := strict
	lenient.RequeueAnswersErrors = true
	for seed := uint64(1); seed <= 3; seed++ {
		r := run(withRules(suite(t, objs, steps, "server-error", ""), strict), seed, requeueing)
		if r.Oracle != verdict.OracleSwallowedError || !strings.Contains(r.Message, "returned no error but asked to be called again after 5s") {
			t.Fatalf("seed %d: got %s %q: %s", seed, r.Status, r.Oracle, r.Message)
		}
		mustPass(t, run(withRules(suite(t, objs, steps, "server-error", ""), lenient), seed, requeueing))
	}
}
