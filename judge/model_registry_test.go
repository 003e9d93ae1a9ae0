package judge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"ctrljudge/exercises"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family/registry"
	"ctrljudge/judge/verdict"
)

// Exercise 173's model, driven by native reconcilers: the reference holds
// under every fault its tests plan, and each way of getting the order of
// the writes wrong is caught by the oracle meant for it.

const registryDir = "status-and-finalizers/173-registry-finalizer"

// registryYAML is the registry holding the given data (a YAML flow map).
func registryYAML(data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: registry}\ndata: " + data + "\n"
}

// registryDeploymentYAML is a Deployment with the given finalizers (a YAML
// flow list) and image.
func registryDeploymentYAML(name, finalizers, image string) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, finalizers: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: app, image: %[3]q}]}
`, name, finalizers, image)
}

// registrySuite builds a one-test suite on the registry model.
func registrySuite(t *testing.T, objects, steps, faults, expect string) *exercise.Exercise {
	t.Helper()
	ex := suiteWith(t, "{for: Deployment}", "registry", objects, steps, faults, expect)
	ex.Number = 173
	return ex
}

// registryKey is where the reference finds the registry.
var registryKey = ctrl.ObjectKey{Namespace: registry.RegistryNamespace, Name: registry.RegistryName}

// registryOptions switch on one mistake each in registryReconciler.
type registryOptions struct {
	entryFirst      bool // records the entry before adding the finalizer
	finalizerFirst  bool // removes the finalizer before the entry
	swallowConflict bool // returns nil when an update conflicts
	deleteRegistry  bool // deletes the registry instead of the entry
	clearFinalizers bool // removes every finalizer, others' too
	stopAfterEntry  bool // returns after removing the entry
	replaceData     bool // writes a registry holding only its own entry
}

// registryReconciler is exercise 173's reference, or with options set a
// wrong variant of it.
func registryReconciler(o registryOptions) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			update := func(obj ctrl.Object) error {
				err := c.Update(ctx, obj)
				if o.swallowConflict && ctrl.IsConflict(err) {
					return nil
				}
				return err
			}
			var d ctrl.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				if ctrl.IsNotFound(err) {
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, err
			}
			entry := req.String()
			var reg ctrl.ConfigMap
			if err := c.Get(ctx, registryKey, &reg); err != nil {
				return ctrl.Result{}, err
			}
			removeFinalizer := func() error {
				if o.clearFinalizers {
					d.Finalizers = nil
				} else {
					ctrl.RemoveFinalizer(&d, registry.RegistryFinalizer)
				}
				return update(&d)
			}
			if d.DeletionTimestamp != nil {
				if !ctrl.ContainsFinalizer(&d, registry.RegistryFinalizer) {
					return ctrl.Result{}, nil
				}
				if o.finalizerFirst {
					if err := removeFinalizer(); err != nil {
						return ctrl.Result{}, err
					}
				}
				if _, ok := reg.Data[entry]; ok {
					if o.deleteRegistry {
						if err := c.Delete(ctx, &reg); err != nil {
							return ctrl.Result{}, err
						}
					} else {
						delete(reg.Data, entry)
						if err := update(&reg); err != nil {
							return ctrl.Result{}, err
						}
					}
					if o.stopAfterEntry {
						return ctrl.Result{}, nil
					}
				}
				if o.finalizerFirst {
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, removeFinalizer()
			}
			addFinalizer := func() error {
				if ctrl.AddFinalizer(&d, registry.RegistryFinalizer) {
					return update(&d)
				}
				return nil
			}
			if !o.entryFirst {
				if err := addFinalizer(); err != nil {
					return ctrl.Result{}, err
				}
			}
			image := ctrl.PodImage(&d.Spec.Template.Spec)
			if got, ok := reg.Data[entry]; !ok || got != image {
				if reg.Data == nil || o.replaceData {
					reg.Data = map[string]string{}
				}
				reg.Data[entry] = image
				if err := update(&reg); err != nil {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{}, addFinalizer()
		}
	}
}

var registryRef = registryReconciler(registryOptions{})

// loadRegistryExercise loads exercise 173 alone, so that a chapter being
// edited next to it cannot break this test.
func loadRegistryExercise(t *testing.T) *exercise.Exercise {
	t.Helper()
	ex, err := exercise.LoadExercise(exercises.FS, registryDir, Checks)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func TestRegistryReferencePassesEveryTestAndSeed(t *testing.T) {
	ex := loadRegistryExercise(t)
	for _, tc := range ex.Suite.Tests {
		for seed := uint64(1); seed <= 30; seed++ {
			r := runTest(context.Background(), startNative(registryRef), ex, tc, seed, "t.go")
			if r.Status != verdict.StatusPass {
				t.Fatalf("%q, seed %d: %s: %s\nfaults: %v\ntrace: %v", tc.Name, seed, r.Oracle, r.Message, r.Faults, r.Trace)
			}
			for _, f := range tc.Faults {
				if seed == DefaultSeed && !slices.Contains(r.FaultClasses, f) {
					t.Errorf("%q: planned fault %s never fired with the default seed", tc.Name, f)
				}
			}
		}
	}
}

// TestRegistryCrashesLandBetweenPairedWrites checks that the crash tests
// do what the statement promises: a crash between adding the finalizer and
// recording the entry, and one between removing the entry and removing the
// finalizer, with the default seed and with most others.
func TestRegistryCrashesLandBetweenPairedWrites(t *testing.T) {
	ex := loadRegistryExercise(t)
	cases := []struct{ test, crash string }{
		{"two new Deployments with crashes after writes", "1st write in reconcile #%d (update Deployment"},
		{"crashes between the two writes of a clean-up", "1st write in reconcile #%d (update ConfigMap registry)"},
	}
	for _, c := range cases {
		var tc *exercise.Test
		for _, x := range ex.Suite.Tests {
			if x.Name == c.test {
				tc = x
			}
		}
		if tc == nil {
			t.Fatalf("test %q is missing", c.test)
		}
		between := 0
		for seed := uint64(1); seed <= 30; seed++ {
			s := newSim(context.Background(), startNative(registryRef), ex.Suite, tc, exercise.TestSeed(seed, tc.Name))
			s.faults.on = true
			s.play(tc)
			if s.fail != nil {
				t.Fatalf("%q, seed %d: %s: %s", c.test, seed, s.fail.oracle, s.fail.message)
			}
			hit := false
			for _, f := range s.faults.log {
				var n int
				if _, err := fmt.Sscanf(f[strings.Index(f, "its ")+4:], c.crash, &n); err == nil {
					hit = true
				}
			}
			if hit {
				between++
			} else if seed == DefaultSeed {
				t.Errorf("%q, default seed: no crash between the paired writes: %v", c.test, s.faults.log)
			}
		}
		if between < 15 {
			t.Errorf("%q: a crash fell between the paired writes in only %d of 30 seeds", c.test, between)
		}
	}
}

func TestRegistryWrongOrdersAreCaught(t *testing.T) {
	inPlace := registryYAML("{default/web: web:v1}") + registryDeploymentYAML("web", "[ctrljudge.dev/registry]", "web:v1")
	fresh := registryYAML("{}") + registryDeploymentYAML("web", "[]", "web:v1")
	del := "- delete: Deployment/web"
	cases := []struct {
		name, objects, steps, faults string
		opts                         registryOptions
		oracle, contains             string
	}{
		{"entry before finalizer", fresh, "", "", registryOptions{entryFirst: true}, "safety", "add the finalizer first"},
		{"finalizer off first", inPlace, del, "", registryOptions{finalizerFirst: true}, "safety", "orphaned for good"},
		{"registry deleted", inPlace, del, "", registryOptions{deleteRegistry: true}, "safety", "deleted the registry ConfigMap"},
		{"stops after the entry", inPlace, del, "", registryOptions{stopAfterEntry: true}, "convergence", "Its entry is already gone, so nothing holds the finalizer back"},
		{"clears others' finalizers",
			registryYAML("{default/web: web:v1}") + registryDeploymentYAML("web", "[backup.example.com/snapshot, ctrljudge.dev/registry]", "web:v1"),
			del, "", registryOptions{clearFinalizers: true}, "safety", "belongs to another controller"},
		{"replaces the registry",
			registryYAML("{default/api: api:v1}") + registryDeploymentYAML("api", "[ctrljudge.dev/registry]", "api:v1") +
				registryDeploymentYAML("web", "[]", "web:v1"),
			"", "", registryOptions{replaceData: true}, "safety", "dropped default/api"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := registrySuite(t, c.objects, c.steps, c.faults, "")
			mustPass(t, run(ex, 1, registryRef))
			r := run(ex, 1, registryReconciler(c.opts))
			mustFail(t, r, c.oracle)
			if !strings.Contains(r.Message, c.contains) {
				t.Errorf("message %q lacks %q", r.Message, c.contains)
			}
		})
	}
}

// A swallowed Conflict: on the finalizer, the entry then goes in
// unguarded (safety); otherwise the call returns no error after a lost
// write (swallowed_conflict). Caught at every seed either way.
func TestRegistrySwallowedConflictsAreCaught(t *testing.T) {
	objs := registryYAML("{}") + registryDeploymentYAML("web", "[]", "web:v1")
	ex := registrySuite(t, objs, "- delete: Deployment/web", "conflict", "")
	ex.Suite.Rules.PassOnConflicts = true
	for seed := uint64(1); seed <= 20; seed++ {
		mustPass(t, run(ex, seed, registryRef))
		r := run(ex, seed, registryReconciler(registryOptions{swallowConflict: true}))
		if r.Oracle != "safety" && r.Oracle != "swallowed_conflict" {
			t.Fatalf("seed %d: got %s %q: %s", seed, r.Status, r.Oracle, r.Message)
		}
	}
}

func TestRegistryConvergenceNamesWhatIsWrong(t *testing.T) {
	nothing := func() ctrl.Reconciler {
		return func(context.Context, ctrl.Client, ctrl.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }
	}
	cases := []struct{ objects, want string }{
		{registryYAML("{}") + registryDeploymentYAML("web", "[]", "web:v1"), "does not carry the finalizer"},
		{registryYAML("{}") + registryDeploymentYAML("web", "[ctrljudge.dev/registry]", "web:v1"), "no entry for default/web"},
		{registryYAML("{default/web: web:v0}") + registryDeploymentYAML("web", "[ctrljudge.dev/registry]", "web:v1"),
			"lists default/web=web:v0, but the Deployment's template asks for image web:v1"},
		{registryYAML("{default/gone: gone:v1}"), "default/gone=gone:v1, but no such Deployment is left"},
	}
	for _, c := range cases {
		r := run(registrySuite(t, c.objects, "", "", ""), 1, nothing)
		mustFail(t, r, "convergence")
		if !strings.Contains(r.Message, c.want) {
			t.Errorf("message %q lacks %q", r.Message, c.want)
		}
	}
}

func TestRegistryWriteDetails(t *testing.T) {
	ex := registrySuite(t, registryYAML("{}")+registryDeploymentYAML("web", "[]", "web:v1"), "- delete: Deployment/web", "",
		`{writes: ["update Deployment web with finalizer", "update ConfigMap default/web=web:v1", "update ConfigMap no entries", "update Deployment web without finalizer"]}`)
	mustPass(t, run(ex, 1, registryRef))
}

func TestRegistryTraceAndTimeline(t *testing.T) {
	objs := registryYAML("{default/api: api:v1}") + registryDeploymentYAML("api", "[ctrljudge.dev/registry]", "api:v1") +
		registryDeploymentYAML("web", "[]", "web:v1")
	ex := registrySuite(t, objs, "", "", "")
	tc := ex.Suite.Tests[0]
	s := newSim(context.Background(), startNative(registryRef), ex.Suite, tc, exercise.TestSeed(1, tc.Name))
	s.play(tc)
	if s.fail != nil {
		t.Fatalf("%s: %s", s.fail.oracle, s.fail.message)
	}
	first, last := s.rec.Timeline[0], s.rec.Timeline[len(s.rec.Timeline)-1]
	if first.Desired != 2 || first.Actual != 1 || first.Ready != 1 || last.Desired != 2 || last.Actual != 2 || last.Ready != 2 {
		t.Errorf("timeline from %+v to %+v; want 2/1/1 to 2/2/2", first, last)
	}
	// The trace shows a starting object's finalizers and entries, which
	// this exercise turns on, rather than replica counts.
	r := run(ex, 1, registryReconciler(registryOptions{entryFirst: true}))
	mustFail(t, r, "safety")
	var lines []string
	for _, l := range r.Trace {
		lines = append(lines, l.Event)
	}
	trace := strings.Join(lines, "\n")
	for _, want := range []string{
		"the test starts with ConfigMap registry (default/api=api:v1)",
		"the test starts with Deployment api (image api:v1, finalizers ctrljudge.dev/registry)",
		"the test starts with Deployment web (image web:v1, no finalizers)",
	} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %q:\n%s", want, trace)
		}
	}
	if !strings.Contains(r.Hint, "crash right after this write") {
		t.Errorf("safety hint: %q", r.Hint)
	}
}
