package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// These tests drive the simulation with native Go reconcilers through the
// same wire protocol a wasm module uses (ctrl.NativeHost), so the faults
// and oracles can be checked precisely and fast. integration_test.go does
// the same end to end with real WebAssembly.

// nativeController runs a Reconciler in-process. newR is called at every
// (re)start, so in-memory state dies with a restart as in a real process.
type nativeController struct {
	s *sim
	r ctrl.Reconciler
}

type hostStop struct{ err error }

func startNative(newR func() ctrl.Reconciler) func(*sim) (controller, error) {
	return func(s *sim) (controller, error) { return &nativeController{s, newR()}, nil }
}

func (n *nativeController) reconcile(ctx context.Context) (err error) {
	ctrl.Register(n.r)
	ctrl.NativeHost = func(op ctrl.Op, msg []byte) []byte {
		reply, herr := n.s.host.HandleCall(uint32(op), msg)
		if herr != nil {
			panic(hostStop{herr})
		}
		return reply
	}
	defer func() {
		ctrl.NativeHost = nil
		if r := recover(); r != nil {
			if hs, ok := r.(hostStop); ok {
				err = &sandbox.Trap{Kind: sandbox.TrapHost, Message: hs.err.Error(), Err: hs.err}
				return
			}
			err = &sandbox.Trap{Kind: sandbox.TrapPanic, Message: fmt.Sprint(r)}
		}
	}()
	ctrl.ReconcileNative()
	return nil
}

func (n *nativeController) close() {}

const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: %s}]}
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
`

func podYAML(name, image string) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {app: web}
  ownerReferences: [{kind: Deployment, name: web, controller: true}]
spec: {containers: [{name: app, image: %s}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
`, name, image)
}

// suite builds a one-test suite on the deployment model.
func suite(t *testing.T, objects, steps, faults, expect string) *exercise.Exercise {
	t.Helper()
	return suiteWith(t, "{for: Deployment, owns: [Pod]}", "deployment", objects, steps, faults, expect)
}

// suiteWith builds a one-test suite for a controller and a model.
func suiteWith(t *testing.T, controller, model, objects, steps, faults, expect string) *exercise.Exercise {
	t.Helper()
	y := "controller: " + controller + "\nmodel: " + model + "\ntests:\n- name: t\n  sample: true\n  objects: |\n" +
		indent(objects, "    ") + "\n"
	if steps != "" {
		y += "  steps:\n" + indent(steps, "  ") + "\n"
	}
	if faults != "" {
		y += "  faults: [" + faults + "]\n"
	}
	if expect != "" {
		y += "  expect: " + expect + "\n"
	}
	s, err := exercise.ParseSuite("test.yaml", []byte(y), Checks)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return &exercise.Exercise{Number: 1, Slug: "t", Suite: s}
}

func indent(s, in string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i := range lines {
		lines[i] = in + lines[i]
	}
	return strings.Join(lines, "\n")
}

func run(ex *exercise.Exercise, seed uint64, newR func() ctrl.Reconciler) verdict.TestResult {
	return runTest(context.Background(), startNative(newR), ex, ex.Suite.Tests[0], seed, "t.go")
}

// stepper is a correct Deployment controller written for these tests from
// the deployment model's definitions, not from exercise 171's rules (the
// real solution is judged end to end by the integration tests): each call
// takes one step toward the desired state (Replicas Ready Pods on the
// template's image) that keeps the model's bounds, at most
// Replicas+MaxSurge Pods and at least Replicas-MaxUnavailable Ready ones.
func stepper() ctrl.Reconciler {
	return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
		var d ctrl.Deployment
		if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
			if ctrl.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
		var list ctrl.PodList
		if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
			return ctrl.Result{}, err
		}
		// Sort the Pods into what the model sees: failed ones (which must
		// go), wanted ones on the template's image, unwanted ones on
		// another.
		var failed, wanted, unwanted []*ctrl.Pod
		ready := 0
		for i := range list.Items {
			p := &list.Items[i]
			switch {
			case p.DeletionTimestamp != nil:
			case p.Status.Phase == ctrl.PodFailed:
				failed = append(failed, p)
			case ctrl.PodImage(&p.Spec) == ctrl.PodImage(&d.Spec.Template.Spec):
				wanted = append(wanted, p)
			default:
				unwanted = append(unwanted, p)
			}
			if p.DeletionTimestamp == nil && ctrl.IsPodReady(p) {
				ready++
			}
		}
		replicas := int(d.Spec.Replicas)
		ceiling := replicas + int(d.Spec.Strategy.RollingUpdate.MaxSurge)
		floor := replicas - int(d.Spec.Strategy.RollingUpdate.MaxUnavailable)
		live := len(wanted) + len(unwanted)
		// A Pod may go if it is not Ready, or if the Ready ones left are enough.
		mayGo := func(p *ctrl.Pod) bool { return !ctrl.IsPodReady(p) || ready-1 >= floor }
		if len(failed) > 0 {
			return ctrl.Result{}, c.Delete(ctx, failed[0])
		}
		if len(wanted) < replicas && live < ceiling {
			p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
				Spec: ctrl.PodSpec{Containers: append([]ctrl.Container(nil), d.Spec.Template.Spec.Containers...)}}
			ctrl.SetControllerReference(&d, p)
			return ctrl.Result{}, c.Create(ctx, p)
		}
		for _, p := range unwanted {
			if mayGo(p) {
				return ctrl.Result{}, c.Delete(ctx, p)
			}
		}
		if len(unwanted) == 0 && len(wanted) > replicas {
			// The newest names go first; a Pod not yet Ready before a Ready one.
			for i := len(wanted) - 1; i >= 0; i-- {
				if !ctrl.IsPodReady(wanted[i]) {
					return ctrl.Result{}, c.Delete(ctx, wanted[i])
				}
			}
			return ctrl.Result{}, c.Delete(ctx, wanted[len(wanted)-1])
		}
		return ctrl.Result{}, nil
	}
}

func rollout() (string, string) {
	objs := fmt.Sprintf(deploymentYAML, 3, "v1") + podYAML("web-a", "v1") + podYAML("web-b", "v1") + podYAML("web-c", "v1")
	return objs, "- patch: {Deployment/web: {spec: {template: {spec: {containers: [{name: app, image: v2}]}}}}}"
}

func mustPass(t *testing.T, r verdict.TestResult) {
	t.Helper()
	if r.Status != verdict.StatusPass {
		t.Fatalf("failed: %s: %s\nfaults: %v\ntrace: %v", r.Oracle, r.Message, r.Faults, r.Trace)
	}
}

func mustFail(t *testing.T, r verdict.TestResult, oracle string) {
	t.Helper()
	if r.Status == verdict.StatusPass || r.Oracle != verdict.Oracle(oracle) {
		t.Fatalf("got %s %q: %s; want oracle %s", r.Status, r.Oracle, r.Message, oracle)
	}
	if r.Replay == "" || len(r.Trace) == 0 {
		t.Fatalf("a failure must carry a replay command and a trace: %+v", r)
	}
}

func TestStepperSurvivesEveryFault(t *testing.T) {
	objs, steps := rollout()
	steps += "\n- patch: {Deployment/web: {spec: {replicas: 5}}}\n- patch: {Deployment/web: {spec: {replicas: 2}}}"
	// Every fault but stale reads: the stepper, like exercise 171's
	// rules, counts on a cache that shows its own last write.
	var classes []string
	for _, c := range verdict.Faults {
		if c != verdict.FaultStaleRead {
			classes = append(classes, string(c))
		}
	}
	all := strings.Join(classes, ", ")
	for seed := uint64(1); seed <= 30; seed++ {
		r := run(suite(t, objs, steps, all, ""), seed, stepper)
		mustPass(t, r)
		if len(r.FaultClasses) < 5 {
			t.Errorf("seed %d: only %v fired", seed, r.FaultClasses)
		}
	}
}

func TestExactWritesOfAScaleUp(t *testing.T) {
	ex := suite(t, fmt.Sprintf(deploymentYAML, 2, "v1"), "", "", `{writes: ["create Pod v1", "create Pod v1"]}`)
	mustPass(t, run(ex, 1, stepper))
	ex = suite(t, fmt.Sprintf(deploymentYAML, 3, "v1"), "", "", `{writes: ["create Pod v1", "create Pod v1"]}`)
	r := run(ex, 1, stepper)
	mustFail(t, r, "writes")
	if !strings.Contains(r.Message, "create Pod v1, create Pod v1, create Pod v1") {
		t.Errorf("message should list the writes made: %s", r.Message)
	}
}

// memory remembers what it created: right until a restart wipes it.
func memory() ctrl.Reconciler {
	created := map[string]int32{}
	return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
		var d ctrl.Deployment
		if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
			return ctrl.Result{}, nil
		}
		if created[req.Name] >= d.Spec.Replicas {
			return ctrl.Result{}, nil
		}
		p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-", Namespace: d.Namespace},
			Spec: ctrl.PodSpec{Containers: d.Spec.Template.Spec.Containers}}
		ctrl.SetControllerReference(&d, p)
		if err := c.Create(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
		created[req.Name]++
		return ctrl.Result{}, nil
	}
}

func TestRestartWipesMemory(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 3, "v1")
	mustPass(t, run(suite(t, objs, "", "", ""), 1, memory))
	failed := 0
	for seed := uint64(1); seed <= 10; seed++ {
		r := run(suite(t, objs, "", "restart", ""), seed, memory)
		if r.Status != verdict.StatusPass {
			failed++
			if r.Oracle != "safety" && r.Oracle != "convergence" {
				t.Errorf("seed %d: oracle %s: %s", seed, r.Oracle, r.Message)
			}
			if !strings.Contains(strings.Join(r.Faults, " "), "its memory was wiped") {
				t.Errorf("seed %d: faults should say memory was wiped: %v", seed, r.Faults)
			}
		}
	}
	if failed < 8 {
		t.Fatalf("in-memory counting survived restarts in %d of 10 seeds", 10-failed)
	}
}

// twoStep creates a Pod and then labels the Deployment in one call,
// recording progress only in the second write: a crash between them leaves
// work it never notices.
func twoStep() ctrl.Reconciler {
	return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
		var d ctrl.Deployment
		if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
			return ctrl.Result{}, nil
		}
		n, _ := strconv.Atoi(d.Labels["created"])
		if int32(n) >= d.Spec.Replicas {
			return ctrl.Result{}, nil
		}
		p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-", Namespace: d.Namespace},
			Spec: ctrl.PodSpec{Containers: d.Spec.Template.Spec.Containers}}
		ctrl.SetControllerReference(&d, p)
		if err := c.Create(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
		d.Labels = map[string]string{"created": strconv.Itoa(n + 1)}
		return ctrl.Result{}, c.Update(ctx, &d)
	}
}

func TestCrashRightAfterAWrite(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1")
	mustPass(t, run(suite(t, objs, "", "", ""), 1, twoStep))
	r := run(suite(t, objs, "", "crash-after-write", ""), 3, twoStep)
	mustFail(t, r, "convergence")
	f := strings.Join(r.Faults, "\n")
	if !strings.Contains(f, "Crashed your controller right after its 1st write") {
		t.Fatalf("faults: %s", f)
	}
	if !strings.Contains(r.Output, "--- controller restarted ---") {
		t.Fatalf("output should show the restart: %q", r.Output)
	}
}

// edgeTriggered acts only when the generation is new to it.
func edgeTriggered() ctrl.Reconciler {
	seen := map[string]int64{}
	inner := stepper()
	return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
		var d ctrl.Deployment
		if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
			return ctrl.Result{}, nil
		}
		if seen[req.Name] == d.Generation {
			return ctrl.Result{}, nil
		}
		seen[req.Name] = d.Generation
		return inner(ctx, c, req)
	}
}

func TestMissedEventsAreCaughtByResync(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 3, "v1")
	for seed := uint64(1); seed <= 5; seed++ {
		r := run(suite(t, objs, "", "missed-event", ""), seed, stepper)
		mustPass(t, r)
	}
	// The edge-triggered controller acts once per generation, so it stops
	// after one Pod no matter how often it is called.
	mustFail(t, run(suite(t, objs, "", "", ""), 1, edgeTriggered), "convergence")
}

func TestCoalescedStepsHideTheMiddleState(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1")
	steps := "- patch: {Deployment/web: {spec: {replicas: 5}}}\n- patch: {Deployment/web: {spec: {replicas: 3}}}"
	seenFive := false
	spy := func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var d ctrl.Deployment
			if c.Get(ctx, req.NamespacedName, &d) == nil && d.Spec.Replicas == 5 {
				seenFive = true
			}
			return inner(ctx, c, req)
		}
	}
	mustPass(t, run(suite(t, objs, steps, "coalesce", ""), 1, spy))
	if seenFive {
		t.Fatal("with coalesce, the controller saw the intermediate replicas: 5")
	}
	mustPass(t, run(suite(t, objs, steps, "", ""), 1, spy))
	if !seenFive {
		t.Fatal("without coalesce, the controller never saw replicas: 5")
	}
}

func TestDuplicateDeliversTheSameKeyAgain(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 3, "v1")
	plain := run(suite(t, objs, "", "", ""), 1, stepper)
	more := 0
	for seed := uint64(1); seed <= 5; seed++ {
		dup := run(suite(t, objs, "", "duplicate", ""), seed, stepper)
		mustPass(t, dup)
		if !slices.Contains(dup.FaultClasses, verdict.FaultDuplicate) || dup.Writes != plain.Writes {
			t.Fatalf("seed %d: duplicates %v: %d reconciles and %d writes, plain: %d and %d", seed, dup.FaultClasses, dup.Reconciles, dup.Writes, plain.Reconciles, plain.Writes)
		}
		if dup.Reconciles > plain.Reconciles {
			more++
		}
	}
	// A duplicate that lands while its key waits in the queue adds no
	// reconcile (the queue holds a key once); most land after.
	if more < 3 {
		t.Fatalf("duplicates added a reconcile at only %d of 5 seeds", more)
	}
}

// naive has no rule against creating twice before its cache catches up.
func naive() ctrl.Reconciler {
	return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
		var d ctrl.Deployment
		if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
			return ctrl.Result{}, nil
		}
		var list ctrl.PodList
		c.List(ctx, &list, ctrl.OwnedBy(&d))
		if int32(len(list.Items)) < d.Spec.Replicas {
			p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-", Namespace: d.Namespace},
				Spec: ctrl.PodSpec{Containers: d.Spec.Template.Spec.Containers}}
			ctrl.SetControllerReference(&d, p)
			return ctrl.Result{}, c.Create(ctx, p)
		}
		return ctrl.Result{}, nil
	}
}

func TestStaleReadsMakeNaiveCreatesOvershoot(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1")
	mustPass(t, run(suite(t, objs, "", "", ""), 1, naive))
	// A duplicate right after a create, with the cache not yet showing it,
	// creates one Pod too many.
	failures := 0
	for seed := uint64(1); seed <= 10; seed++ {
		if r := run(suite(t, objs, "", "stale-read, duplicate", ""), seed, naive); r.Status != verdict.StatusPass {
			failures++
		}
	}
	if failures == 0 {
		t.Fatal("stale reads never misled the naive controller")
	}
}

func TestConflictsReachTheController(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 1, "v1")
	var conflicts int
	labeler := func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var d ctrl.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				return ctrl.Result{}, nil
			}
			if d.Labels["seen"] == "yes" {
				return stepper()(ctx, c, req)
			}
			d.Labels = map[string]string{"seen": "yes"}
			err := c.Update(ctx, &d)
			if ctrl.IsConflict(err) {
				conflicts++
			}
			return ctrl.Result{}, err
		}
	}
	mustPass(t, run(suite(t, objs, "", "conflict", ""), 1, labeler))
	if conflicts == 0 {
		t.Fatal("no Conflict reached the controller")
	}
}

func TestOracles(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1")
	cases := []struct {
		name, oracle, contains string
		r                      func() ctrl.Reconciler
	}{
		{"does nothing", "convergence", "wants 2 Pods on image v1", func() ctrl.Reconciler {
			return func(context.Context, ctrl.Client, ctrl.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }
		}},
		{"touches the Deployment on every call", "idempotency", "update Deployment", func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				var d ctrl.Deployment
				c.Get(ctx, req.NamespacedName, &d)
				c.Update(ctx, &d)
				return inner(ctx, c, req)
			}
		}},
		{"requeues forever", "budget", "never settled", func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				inner(ctx, c, req)
				return ctrl.Result{RequeueAfter: 1}, nil
			}
		}},
		{"always fails", "errors", "kept returning an error", func() ctrl.Reconciler {
			inner := stepper()
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				inner(ctx, c, req)
				return ctrl.Result{}, errors.New("no luck")
			}
		}},
		{"creates everything at once", "safety", "at most 3", func() ctrl.Reconciler {
			return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
				var d ctrl.Deployment
				c.Get(ctx, req.NamespacedName, &d)
				for i := 0; i < 5; i++ {
					p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-"}, Spec: d.Spec.Template.Spec}
					ctrl.SetControllerReference(&d, p)
					c.Create(ctx, p)
				}
				return ctrl.Result{}, nil
			}
		}},
		{"panics", "runtime", "nil map", func() ctrl.Reconciler {
			return func(context.Context, ctrl.Client, ctrl.Request) (ctrl.Result, error) {
				var m map[string]int
				//lint:ignore SA5000 the panic is what this case tests
				m["x"] = 1
				return ctrl.Result{}, nil
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(suite(t, objs, "", "", ""), 1, c.r)
			mustFail(t, r, c.oracle)
			if !strings.Contains(r.Message, c.contains) {
				t.Errorf("message %q lacks %q", r.Message, c.contains)
			}
		})
	}
}

func TestSameSeedSameRun(t *testing.T) {
	objs, steps := rollout()
	ex := suite(t, objs, steps, "restart, crash-after-write, duplicate, coalesce, missed-event, pod-failure", "")
	a, b := run(ex, 7, stepper), run(ex, 7, stepper)
	if fmt.Sprint(a.Faults, a.Reconciles, a.Writes, a.FaultClasses) != fmt.Sprint(b.Faults, b.Reconciles, b.Writes, b.FaultClasses) {
		t.Fatalf("same seed, different runs:\n%v\n%v", a, b)
	}
	c := run(ex, 8, stepper)
	if fmt.Sprint(a.Faults) == fmt.Sprint(c.Faults) && a.Reconciles == c.Reconciles {
		t.Fatal("another seed should inject other faults")
	}
}

// A watched kind wakes every For object; an owned or unrelated one does not.
func TestWatchedKindsEnqueueEveryForObject(t *testing.T) {
	y := "controller: {for: Deployment, watches: [ConfigMap]}\nmodel: deployment\ntests:\n- name: t\n  sample: true\n  objects: |\n" +
		indent(fmt.Sprintf(deploymentYAML, 0, "v1")+"---"+strings.ReplaceAll(fmt.Sprintf(deploymentYAML, 0, "v1"), "name: web", "name: api"), "    ") + "\n" +
		"  steps:\n  - apply: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: shared}\n      data: {a: b}\n"
	s, err := exercise.ParseSuite("test.yaml", []byte(y), Checks)
	if err != nil {
		t.Fatal(err)
	}
	ex := &exercise.Exercise{Number: 1, Slug: "t", Suite: s}
	var seen []string
	spy := func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			seen = append(seen, req.Name)
			return ctrl.Result{}, nil
		}
	}
	mustPass(t, run(ex, 1, spy))
	// Start: in creation order; the ConfigMap: every Deployment by name;
	// the idempotency check: both once more.
	if got := strings.Join(seen, " "); got != "web api api web api web" {
		t.Fatalf("reconciled %q", got)
	}
}

// A stale window ends when the controller rests: a workload step that
// comes later finds the cache caught up. The naive controller creates a Pod
// whenever it sees too few; had its own last create stayed hidden until the
// step woke it, it would create one too many and never converge.
func TestStaleReadsEndWhenTheControllerRests(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1") + podYAML("web-a", "v1")
	steps := "- patch: {Deployment/web: {metadata: {labels: {touched: \"yes\"}}}}"
	fired := 0
	for seed := uint64(1); seed <= 20; seed++ {
		r := run(suite(t, objs, steps, "stale-read", ""), seed, naive)
		mustPass(t, r)
		if slices.Contains(r.FaultClasses, verdict.FaultStaleRead) {
			fired++
		}
	}
	if fired == 0 {
		t.Fatal("the stale read never fired")
	}
}

// An apply step over an existing object keeps the finalizers a controller
// added, as kubectl apply does.
func TestApplyKeepsFinalizers(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 0, "v1")
	steps := "- apply: |\n" + indent(fmt.Sprintf(deploymentYAML, 0, "v2"), "    ")
	var last []string
	r := func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var d ctrl.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				return ctrl.Result{}, err
			}
			last = d.Finalizers
			if ctrl.AddFinalizer(&d, "example.com/keep") {
				return ctrl.Result{}, c.Update(ctx, &d)
			}
			return ctrl.Result{}, nil
		}
	}
	res := run(suite(t, objs, steps, "", ""), 1, r)
	mustPass(t, res)
	if res.Writes != 1 || len(last) != 1 {
		t.Fatalf("%d writes, finalizers %v: the apply dropped the finalizer", res.Writes, last)
	}
}

// Shrinking keeps only the faults a failure needs: in-memory counting
// breaks under restarts, not under duplicates or missed events.
// The suite's test is left as it was: other judgements read it at the
// same time.
func TestShrinkKeepsTheFaultThatMatters(t *testing.T) {
	steps := "- apply: |\n" + indent(fmt.Sprintf(deploymentYAML, 4, "v1"), "    ")
	ex := suite(t, fmt.Sprintf(deploymentYAML, 3, "v1"), steps, "duplicate, restart, missed-event", "")
	tt := ex.Suite.Tests[0]
	before := tt.Steps[0].Parsed
	defer func() {
		if &tt.Steps[0].Parsed[0] != &before[0] {
			t.Error("shrinking parsed its trials into the suite's own test")
		}
	}()
	for seed := uint64(1); seed <= 5; seed++ {
		r := run(ex, seed, memory)
		if r.Status == verdict.StatusPass {
			continue
		}
		sh, _ := shrink(context.Background(), startNative(memory), ex, tt, seed, "t.go", &r)
		if sh == nil || text.JoinNames(sh.Faults, ",") != "restart" || !strings.HasSuffix(sh.Replay, "--faults restart") {
			t.Fatalf("seed %d: shrunk to %+v", seed, sh)
		}
		return
	}
	t.Fatal("in-memory counting never failed under restarts")
}

// The Pods a step picks "at random" do not depend on how many calls the
// controller made: two correct controllers, one of which reads more (and
// so meets more server errors and retries), see the same world, so the
// reference's end state can be compared with the learner's.
func TestStepTargetsDoNotDependOnTheController(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 3, "v1") + podYAML("web-a", "v1") + podYAML("web-b", "v1") + podYAML("web-c", "v1")
	steps := "- delete: Pod/random\n- fail: Pod/random\n- delete: Pod/random"
	ex := suite(t, objs, steps, "server-error, restart", "")
	chatty := func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			for range 3 {
				var d ctrl.Deployment
				if err := c.Get(ctx, req.NamespacedName, &d); err != nil && !ctrl.IsNotFound(err) {
					return ctrl.Result{}, err
				}
			}
			return inner(ctx, c, req)
		}
	}
	world := func(s *sim) string {
		var names []string
		for _, o := range s.api.List(ctrl.KindPod) {
			names = append(names, o.GetObjectMeta().Name)
		}
		return strings.Join(names, " ") + " | " + strings.Join(s.faults.log, " | ")
	}
	differ := 0
	for seed := uint64(1); seed <= 12; seed++ {
		budget := func() *sandbox.StepBudget { return &sandbox.StepBudget{Max: MaxStepsPerTest} }
		a := playTest(context.Background(), startNative(stepper), ex, ex.Suite.Tests[0], seed, "t.go", nil, budget())
		b := playTest(context.Background(), startNative(chatty), ex, ex.Suite.Tests[0], seed, "t.go", nil, budget())
		if a.fail != nil || b.fail != nil {
			t.Fatalf("seed %d: a correct controller failed: %v %v", seed, a.fail, b.fail)
		}
		if a.faults.chance[verdict.FaultServerError] == b.faults.chance[verdict.FaultServerError] {
			t.Fatalf("seed %d: the chatty controller should have more server-error opportunities", seed)
		}
		var pa, pb []string
		for _, o := range a.api.List(ctrl.KindPod) {
			pa = append(pa, o.GetObjectMeta().Name)
		}
		for _, o := range b.api.List(ctrl.KindPod) {
			pb = append(pb, o.GetObjectMeta().Name)
		}
		if !slices.Equal(pa, pb) {
			t.Errorf("seed %d: the steps picked other Pods:\n%s\n%s", seed, world(a), world(b))
		}
		if !slices.Contains(pa, "web-a") || !slices.Contains(pa, "web-b") || !slices.Contains(pa, "web-c") {
			differ++
		}
	}
	if differ == 0 {
		t.Error("no seed deleted one of the first Pods: the steps did not act")
	}
}

// A Deployment deleted and created again at once (recreate) is a new
// object, and its first call meets the old one's Pods, which the garbage
// collector removes only after it: a controller that takes Pods by their
// owner's name, not its UID, sees them as its own.
func TestRecreateMeetsTheOldPodsOnce(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1") + podYAML("web-a", "v1") + podYAML("web-b", "v1")
	again := strings.TrimSpace(fmt.Sprintf(deploymentYAML, 2, "v2"))
	steps := "- recreate: true\n  apply: |\n" + indent(again, "    ")
	ex := suite(t, objs, steps, "", "")
	var seen []int // at each call after the step: Pods named for web, and those it owns
	var stepped bool
	spy := func() ctrl.Reconciler {
		inner := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var d ctrl.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err == nil && ctrl.PodImage(&d.Spec.Template.Spec) == "v2" && !stepped {
				stepped = true
				var all, owned ctrl.PodList
				c.List(ctx, &all, ctrl.InNamespace(req.Namespace))
				c.List(ctx, &owned, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d))
				seen = append(seen, len(all.Items), len(owned.Items))
			}
			return inner(ctx, c, req)
		}
	}
	mustPass(t, run(ex, 1, spy))
	if !slices.Equal(seen, []int{2, 0}) {
		t.Fatalf("at the new Deployment's first call: %v Pods in all and owned, want the old two and none owned", seen)
	}
}

// A wait step and the world's restFor move the clock on without events:
// the controller is called only when a requeue it asked for falls due,
// each at its time, and not for one that falls due later.
func TestWaitAndRestServeOnlyDueRequeues(t *testing.T) {
	y := "controller: {for: Deployment, owns: [Pod]}\nmodel: deployment\nworld: {restFor: 20m}\ntests:\n- name: t\n  sample: true\n  objects: |\n" +
		indent(fmt.Sprintf(deploymentYAML, 0, "web:v1"), "    ") + "\n  steps:\n  - wait: 15m\n"
	s, err := exercise.ParseSuite("test.yaml", []byte(y), Checks)
	if err != nil {
		t.Fatal(err)
	}
	ex := &exercise.Exercise{Number: 1, Slug: "t", Suite: s}
	var calls []time.Duration
	after := map[int]time.Duration{0: 12 * time.Minute, 1: 30 * time.Minute}
	r := run(ex, 1, func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			calls = append(calls, ctrl.Now().Sub(cluster.Epoch))
			return ctrl.Result{RequeueAfter: after[len(calls)-1]}, nil
		}
	})
	mustPass(t, r)
	// At 0 the first call; at 12 min the requeue it asked for, served by
	// the wait step (a phase alone serves only ten minutes ahead); the
	// one for 42 min falls after the rest (15 + 20 min): the next call is
	// the idempotency check's, at 35 min, whose own phase then serves it
	// (ten minutes ahead, as every phase does).
	want := []time.Duration{0, 12 * time.Minute, 35 * time.Minute, 42 * time.Minute}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls at %v, want %v", calls, want)
	}
}
