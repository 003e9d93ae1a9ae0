package judge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// The rules a statement makes about every call (Rules), each with its
// oracle, on native controllers; integration_test.go and
// testdata/learner check the same with real WebAssembly.

func withRules(ex *exercise.Exercise, r exercise.Rules) *exercise.Exercise {
	ex.Suite.Rules = r
	return ex
}

var allRules = exercise.Rules{WritesPerCall: 1, NoMadeUpErrors: true, NoRequeue: true, KeepForeignMetadata: true}

// A Deployment with entries a user set: a label, an annotation, a finalizer.
const foreignDeploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {team: shop}
  annotations: {example.com/owner: "shop team"}
  finalizers: [example.com/audit]
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: v1}]}
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
`

func TestTheStepperKeepsEveryRule(t *testing.T) {
	objs, steps := rollout()
	mustPass(t, run(withRules(suite(t, objs, steps, "restart, crash-after-write, duplicate, missed-event, stale-read", ""), allRules), 1, stepper))
}

func TestRuleOracles(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1")
	cases := []struct {
		name, objs, oracle, contains string
		r                            func() ctrl.Reconciler
	}{
		{"two creates in one call", objs, "writes_per_call", "made 2 writes: create Pod web-", func() ctrl.Reconciler {
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				var d ctrl.Deployment
				c.Get(ctx, req.NamespacedName, &d)
				for i := 0; i < 2; i++ {
					p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-"}, Spec: d.Spec.Template.Spec}
					ctrl.SetControllerReference(&d, p)
					c.Create(ctx, p)
				}
				return ctrl.Result{}, nil
			}
		}},
		{"an error after a write that worked", objs, "made_up_error", `returned the error "again"`, func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				inner(ctx, c, req)
				return ctrl.Result{}, errors.New("again")
			}
		}},
		{"a requeue", objs, "requeue", "asked to be called again after 1m0s", func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				inner(ctx, c, req)
				return ctrl.Result{RequeueAfter: 60e9}, nil
			}
		}},
		{"a label map replaced", foreignDeploymentYAML, "foreign_metadata",
			`Your update of Deployment web in reconcile #1 removed the label team="shop", which the test's user had set`, func() ctrl.Reconciler {
				return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
					var d ctrl.Deployment
					c.Get(ctx, req.NamespacedName, &d)
					if d.Labels["seen"] != "" {
						return ctrl.Result{}, nil
					}
					d.Labels = map[string]string{"seen": "yes"}
					return ctrl.Result{}, c.Update(ctx, &d)
				}
			}},
		{"an annotation overwritten", foreignDeploymentYAML, "foreign_metadata",
			`changed the annotation example.com/owner="shop team", which the test's user had set, to "me"`, func() ctrl.Reconciler {
				return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
					var d ctrl.Deployment
					c.Get(ctx, req.NamespacedName, &d)
					if d.Annotations["example.com/owner"] == "me" {
						return ctrl.Result{}, nil
					}
					d.Annotations["example.com/owner"] = "me"
					return ctrl.Result{}, c.Update(ctx, &d)
				}
			}},
		{"a finalizer list replaced", foreignDeploymentYAML, "foreign_metadata",
			"removed the finalizer example.com/audit, which the test's user had set", func() ctrl.Reconciler {
				return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
					var d ctrl.Deployment
					c.Get(ctx, req.NamespacedName, &d)
					if ctrl.ContainsFinalizer(&d, "mine") {
						return ctrl.Result{}, nil
					}
					d.Finalizers = []string{"mine"}
					return ctrl.Result{}, c.Update(ctx, &d)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(withRules(suite(t, c.objs, "", "", ""), allRules), 1, c.r)
			mustFail(t, r, c.oracle)
			if !strings.Contains(r.Message, c.contains) {
				t.Errorf("message %q lacks %q", r.Message, c.contains)
			}
			// Without the rule, the same controller breaks no oracle of
			// the rules.
			r = run(suite(t, c.objs, "", "", ""), 1, c.r)
			for _, o := range []verdict.Oracle{verdict.OracleWritesPerCall, verdict.OracleMadeUpError, verdict.OracleRequeue, verdict.OracleForeignMetadata} {
				if r.Oracle == o {
					t.Errorf("without rules: failed %s: %s", o, r.Message)
				}
			}
		})
	}
}

// An error passed on from a call that failed is no made-up one: the
// errors oracle judges it at rest instead.
func TestAnErrorFromAFailedCallIsNotMadeUp(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 1, "v1")
	r := run(withRules(suite(t, objs, "", "", ""), allRules), 1, func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			inner(ctx, c, req)
			var cm ctrl.ConfigMap
			return ctrl.Result{}, c.Get(ctx, ctrl.ObjectKey{Namespace: "default", Name: "missing"}, &cm)
		}
	})
	mustFail(t, r, "errors")
}

// Labels, annotations and finalizers edited in place, and the object read
// afresh after a Conflict: every rule holds under real conflicts.
func TestEditingInPlaceKeepsOthersMetadata(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		mustPass(t, run(withRules(suite(t, foreignDeploymentYAML, "", "conflict", ""), allRules), seed, func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				var d ctrl.Deployment
				if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
					return ctrl.Result{}, err
				}
				if d.Labels["seen"] != "" {
					return inner(ctx, c, req)
				}
				d.Labels["seen"] = "yes"
				return ctrl.Result{}, c.Update(ctx, &d) // a Conflict is returned and retried
			}
		}))
	}
}

// The conflict fault's other writer really changes the object: a
// controller that answers a Conflict by copying the fresh resourceVersion
// onto its old copy erases that change, at every seed.
func TestCopyingTheResourceVersionErasesTheOtherWritersChange(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 1, "v1")
	for seed := uint64(1); seed <= 5; seed++ {
		r := run(withRules(suite(t, objs, "", "conflict", ""), allRules), seed, func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				var d ctrl.Deployment
				if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
					return ctrl.Result{}, err
				}
				if d.Labels["seen"] != "" {
					return inner(ctx, c, req)
				}
				if d.Labels == nil {
					d.Labels = map[string]string{}
				}
				d.Labels["seen"] = "yes"
				err := c.Update(ctx, &d)
				if ctrl.IsConflict(err) {
					var fresh ctrl.Deployment
					c.Get(ctx, req.NamespacedName, &fresh)
					d.ResourceVersion = fresh.ResourceVersion
					err = c.Update(ctx, &d)
				}
				return ctrl.Result{}, err
			}
		})
		if r.Status == verdict.StatusPass {
			t.Logf("seed %d: %q\n%v", seed, r.Faults, r.FaultClasses)
		}
		mustFail(t, r, "foreign_metadata")
		if !strings.Contains(r.Message, "which another writer had set") || len(r.Faults) == 0 ||
			!strings.Contains(r.Faults[0], "Another writer changed Deployment web just before your update") {
			t.Fatalf("seed %d: %s\nfaults: %q", seed, r.Message, r.Faults)
		}
	}
}

func TestTheAPIServerKnowsWhoSetWhat(t *testing.T) {
	s := cluster.NewAPIServer(nil, func() (t0 time.Time) { return })
	actor := "user"
	s.By = func() string { return actor }
	objs, err := exercise.ParseManifests(foreignDeploymentYAML)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.Create(objs[0], true)
	// The controller adds its own label: nothing lost.
	actor = "controller"
	next := ctrl.DeepCopy(before)
	next.GetObjectMeta().Labels["mine"] = "x"
	after, _ := s.Update(next, false)
	if l, ok := s.LostForeign(before, after, nil); ok {
		t.Fatalf("an added label lost %+v", l)
	}
	// It drops the user's finalizer: lost, unless it is named its own.
	next = ctrl.DeepCopy(after)
	next.GetObjectMeta().Finalizers = nil
	after2, _ := s.Update(next, false)
	if l, ok := s.LostForeign(after, after2, nil); !ok || l.Key != (cluster.MetaKey{Field: "finalizer", Name: "example.com/audit"}) || l.Actor != "user" || !l.Gone {
		t.Fatalf("a dropped finalizer: %+v %v", l, ok)
	}
	if _, ok := s.LostForeign(after, after2, []string{"example.com/audit"}); ok {
		t.Fatal("an own key counted as foreign")
	}
	// What the user removes is no one's any more.
	actor = "user"
	next = ctrl.DeepCopy(after2)
	delete(next.GetObjectMeta().Labels, "team")
	after3, _ := s.Update(next, false)
	if _, ok := s.Owners[after3.GetObjectMeta().UID][cluster.MetaKey{Field: "label", Name: "team"}]; ok {
		t.Fatal("a label the user removed is still tracked")
	}
}
