package judge

import (
	"context"
	"strings"
	"testing"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/verdict"
)

// The server-error fault and the rule that its failures are passed on
// (Rules.PassOnErrors, oracle swallowed_error), on native controllers.

var passOnErrors = Rules{WritesPerCall: 1, NoMadeUpErrors: true, PassOnErrors: true, NoRequeue: true}

// swallowing is a client that answers nil where a call of kind call
// ("get", "list", "create", "delete") failed with anything but NotFound:
// the mistake of an `if err != nil` on the wrong side. With retry, it
// makes a failed call once more instead, which is fine.
type swallowing struct {
	ctrl.Client
	call  string
	retry bool
}

func (s swallowing) handle(call string, do func() error) error {
	err := do()
	if err == nil || ctrl.IsNotFound(err) || call != s.call && s.call != "any" {
		return err
	}
	if s.retry {
		return do()
	}
	return nil
}

func (s swallowing) Get(ctx context.Context, key ctrl.ObjectKey, obj ctrl.Object) error {
	return s.handle("get", func() error { return s.Client.Get(ctx, key, obj) })
}

func (s swallowing) List(ctx context.Context, list ctrl.ObjectList, opts ...ctrl.ListOption) error {
	return s.handle("list", func() error { return s.Client.List(ctx, list, opts...) })
}

func (s swallowing) Create(ctx context.Context, obj ctrl.Object) error {
	return s.handle("create", func() error { return s.Client.Create(ctx, obj) })
}

func (s swallowing) Delete(ctx context.Context, obj ctrl.Object) error {
	return s.handle("delete", func() error { return s.Client.Delete(ctx, obj) })
}

func withClient(wrap func(ctrl.Client) ctrl.Client) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			return inner(ctx, wrap(c), req)
		}
	}
}

// failures is a client that counts, by kind of call, the server errors
// its controller meets.
type failures struct {
	ctrl.Client
	seen map[string]int
}

func (f failures) note(call string, err error) error {
	if ctrl.IsInternalError(err) || ctrl.IsServiceUnavailable(err) {
		f.seen[call]++
	}
	return err
}

func (f failures) Get(ctx context.Context, key ctrl.ObjectKey, obj ctrl.Object) error {
	return f.note("get", f.Client.Get(ctx, key, obj))
}

func (f failures) List(ctx context.Context, list ctrl.ObjectList, opts ...ctrl.ListOption) error {
	return f.note("list", f.Client.List(ctx, list, opts...))
}

func (f failures) Create(ctx context.Context, obj ctrl.Object) error {
	return f.note("create", f.Client.Create(ctx, obj))
}

func (f failures) Delete(ctx context.Context, obj ctrl.Object) error {
	return f.note("delete", f.Client.Delete(ctx, obj))
}

// A correct controller passes at every seed, and between the first run
// and the rerun that aims at the kinds it missed, every kind of call the
// controller makes meets a server error.
func TestServerErrorsReachEveryKindOfCall(t *testing.T) {
	objs, steps := rollout()
	for seed := uint64(1); seed <= 5; seed++ {
		seen := map[string]int{}
		r := run(withRules(suite(t, objs, steps, "server-error", ""), passOnErrors), seed,
			withClient(func(c ctrl.Client) ctrl.Client { return failures{c, seen} }))
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
				r := run(ex, seed, withClient(func(c ctrl.Client) ctrl.Client { return swallowing{c, call, false} }))
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
				mustPass(t, run(ex, seed, withClient(func(c ctrl.Client) ctrl.Client { return swallowing{c, call, true} })))
			}
		})
	}
}

// Without the rule, dropping a server error is judged by its effects
// only; the rule's oracle never speaks.
func TestSwallowedServerErrorsWithoutTheRule(t *testing.T) {
	objs, steps := rollout()
	for seed := uint64(1); seed <= 3; seed++ {
		r := run(suite(t, objs, steps, "server-error", ""), seed, withClient(func(c ctrl.Client) ctrl.Client { return swallowing{c, "any", false} }))
		if r.Oracle == verdict.OracleSwallowedError {
			t.Fatalf("seed %d: swallowed_error without the rule: %s", seed, r.Message)
		}
	}
}
