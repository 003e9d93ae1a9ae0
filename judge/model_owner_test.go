package judge

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"ctrljudge/exercises"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// Exercise 175's model, driven by a native controller written from the
// statement's rules (not from solution.go, which is judged end to end as
// WebAssembly): it holds under every test and fault, and each mistake the
// statement warns of is caught by the oracle meant for it.

const ownerDir = "controller-pattern/175-own-what-you-create"

// ownerOptions switch on one mistake each in ownerReconciler.
type ownerOptions struct {
	generateName   bool // the child gets a generated name
	adoptOrphans   bool // a Deployment without a controller counts as the App's
	statusEachCall bool // writes the status whether it changed or not
	noOwner        bool // creates the child without an owner reference
	noTimer        bool // reports a blocked name, asks for no requeue
	freshTime      bool // stamps lastTransitionTime at every status write
	deletesForeign bool // deletes a Deployment in the App's way
}

func ownerReconciler(o ownerOptions) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var app ctrl.App
			if err := c.Get(ctx, req.NamespacedName, &app); err != nil {
				if ctrl.IsNotFound(err) {
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, err
			}
			if app.DeletionTimestamp != nil {
				return ctrl.Result{}, nil
			}
			// The status the statement wants, written only if it differs.
			report := func(status ctrl.ConditionStatus, reason string) error {
				conds := slices.Clone(app.Status.Conditions)
				i := slices.IndexFunc(conds, func(c ctrl.Condition) bool { return c.Type == "Ready" })
				if i < 0 {
					conds = append(conds, ctrl.Condition{Type: "Ready"})
					i = len(conds) - 1
				}
				want := conds[i]
				if want.Status != status || want.LastTransitionTime.IsZero() || o.freshTime {
					want.LastTransitionTime = ctrl.Now()
				}
				want.Status, want.Reason, want.Message, want.ObservedGeneration = status, reason, "said by the test", app.Generation
				if !o.statusEachCall && conds[i].Status == want.Status && conds[i].Reason == want.Reason &&
					conds[i].Message == want.Message && conds[i].ObservedGeneration == want.ObservedGeneration &&
					app.Status.ObservedGeneration == app.Generation {
					return nil
				}
				conds[i] = want
				app.Status.Conditions, app.Status.ObservedGeneration = conds, app.Generation
				return c.UpdateStatus(ctx, &app)
			}
			var d ctrl.Deployment
			switch err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &d); {
			case ctrl.IsNotFound(err):
				nd := &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
				if o.generateName {
					nd.Name, nd.GenerateName = "", app.Name+"-"
				}
				nd.Spec.Replicas = app.Spec.Replicas
				nd.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
				nd.Spec.Template.Labels = map[string]string{"app": app.Name}
				nd.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
				if !o.noOwner {
					ctrl.SetControllerReference(&app, nd)
				}
				err := c.Create(ctx, nd)
				if ctrl.IsAlreadyExists(err) {
					return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
				}
				return ctrl.Result{}, err
			case err != nil:
				return ctrl.Result{}, err
			}
			mine := ctrl.IsControlledBy(&d, &app) || o.adoptOrphans && ctrl.GetControllerOf(&d) == nil
			if !mine {
				if o.deletesForeign {
					return ctrl.Result{}, c.Delete(ctx, &d)
				}
				if err := report(ctrl.ConditionFalse, "ResourceExists"); err != nil {
					return ctrl.Result{}, err
				}
				if o.noTimer {
					return ctrl.Result{}, nil
				}
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
				d.Spec.Replicas = app.Spec.Replicas
				d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
				return ctrl.Result{}, c.Update(ctx, &d)
			}
			return ctrl.Result{}, report(ctrl.ConditionTrue, "DeploymentUpToDate")
		}
	}
}

var ownerRef = ownerReconciler(ownerOptions{})

func loadOwnerExercise(t *testing.T) *exercise.Exercise {
	t.Helper()
	ex, err := exercise.LoadExercise(exercises.FS, ownerDir, Checks)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// ownerSuite builds a one-test suite on the owner model, with 175's world
// and rules.
func ownerSuite(t *testing.T, objects, steps, faults string) *exercise.Exercise {
	t.Helper()
	ex := suiteWith(t, "{for: App, owns: [Deployment]}", "owner", objects, steps, faults, "")
	ex.Suite.World.StepGap = exercise.Duration(time.Minute)
	ex.Suite.Rules = loadOwnerExercise(t).Suite.Rules
	return ex
}

const (
	chatApp = `kind: App
apiVersion: serving.example.com/v1
metadata: {name: chat}
spec: {image: "vllm:0.6", replicas: 2}
`
	// chatForeign is a Deployment under chat's name that nobody owns.
	chatForeign = `---
kind: Deployment
apiVersion: apps/v1
metadata: {name: chat}
spec:
  replicas: 1
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec: {containers: [{name: server, image: "vllm:0.5"}]}
`
)

func TestOwnerReferencePassesEveryTestAndSeed(t *testing.T) {
	ex := loadOwnerExercise(t)
	for _, tc := range ex.Suite.Tests {
		for seed := uint64(1); seed <= 10; seed++ {
			r := runTest(context.Background(), startNative(ownerRef), ex, tc, seed, "t.go")
			if r.Status != verdict.StatusPass {
				t.Fatalf("%q, seed %d: %s: %s\nfaults: %v\ntrace: %v", tc.Name, seed, r.Oracle, r.Message, r.Faults, r.Trace)
			}
		}
	}
}

func TestOwnerMistakesAreCaught(t *testing.T) {
	free := "- delete: Deployment/chat"
	edit := `- patch: {App/chat: {spec: {image: "vllm:0.7"}}}`
	cases := []struct {
		name, objects, steps, faults string
		opts                         ownerOptions
		oracle, contains             string
	}{
		{"generated name", chatApp, "", "", ownerOptions{generateName: true}, "safety", "a generated name never does"},
		{"adopts a hand-made Deployment", chatApp + chatForeign, "", "", ownerOptions{adoptOrphans: true}, "safety", "which App chat does not control (it has no controller owner)"},
		{"deletes the Deployment in its way", chatApp + chatForeign, "", "", ownerOptions{deletesForeign: true}, "safety", "No rule deletes a Deployment"},
		{"status on every call", chatApp, "", "", ownerOptions{statusEachCall: true}, "idempotency", "update-status App chat"},
		{"no owner reference", chatApp, "", "", ownerOptions{noOwner: true}, "convergence", "taken by a Deployment that is not its own (it has no controller owner)"},
		{"no timer when blocked", chatApp + chatForeign, free, "", ownerOptions{noTimer: true}, "convergence", "App chat has no Deployment chat"},
		{"fresh lastTransitionTime", chatApp, edit, "", ownerOptions{freshTime: true}, "safety", "though Ready stayed True"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := ownerSuite(t, c.objects, c.steps, c.faults)
			mustPass(t, run(ex, 1, ownerRef))
			r := run(ex, 1, ownerReconciler(c.opts))
			mustFail(t, r, c.oracle)
			if !strings.Contains(r.Message, c.contains) {
				t.Errorf("message %q lacks %q", r.Message, c.contains)
			}
		})
	}
}

// A stale cache hides the controller's own create from its next call:
// with the App's name, the second create fails harmlessly; with a
// generated one, it makes a twin, at most seeds.
func TestOwnerStaleReadsMakeGeneratedNamesTwins(t *testing.T) {
	ex := ownerSuite(t, chatApp, `- patch: {App/chat: {spec: {replicas: 3}}}`, "stale-read, duplicate")
	twins := 0
	for seed := uint64(1); seed <= 10; seed++ {
		mustPass(t, run(ex, seed, ownerRef))
		if r := run(ex, seed, ownerReconciler(ownerOptions{generateName: true})); r.Oracle == verdict.OracleSafety {
			twins++
		}
	}
	if twins < 10 {
		t.Errorf("a generated name made a twin at %d of 10 seeds", twins)
	}
}

// The model says what is wrong at rest in the words of the statement.
func TestOwnerConvergenceNamesWhatIsWrong(t *testing.T) {
	nothing := func() ctrl.Reconciler {
		return func(context.Context, ctrl.Client, ctrl.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }
	}
	own := `---
kind: Deployment
apiVersion: apps/v1
metadata:
  name: chat
  ownerReferences: [{kind: App, name: chat, controller: true}]
spec:
  replicas: %s
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec: {containers: [{name: server, image: "vllm:0.6"}]}
`
	cases := []struct{ objects, want string }{
		{chatApp, "App chat has no Deployment chat in namespace default"},
		{chatApp + chatForeign, "its status should say Ready False (ResourceExists) at generation 1, but it has no Ready condition"},
		{chatApp + strings.Replace(own, "%s", "1", 1), "its Deployment runs vllm:0.6 with 1"},
		{chatApp + strings.Replace(own, "%s", "2", 1), "in place and in step, but its status should say Ready True (DeploymentUpToDate)"},
	}
	for _, c := range cases {
		r := run(ownerSuite(t, c.objects, "", ""), 1, nothing)
		mustFail(t, r, "convergence")
		if !strings.Contains(r.Message, c.want) {
			t.Errorf("message %q lacks %q", r.Message, c.want)
		}
	}
}

// A meanwhileApply step creates its object just before the controller's
// write to that name: the controller's create meets AlreadyExists.
func TestMeanwhileApplyLandsBeforeTheCreate(t *testing.T) {
	steps := "- meanwhileApply: |\n" + indent(strings.TrimPrefix(strings.Replace(chatForeign, "name: chat}", "name: chat, labels: {team: ml}}", 1), "---\n"), "    ") +
		"\n- apply: |\n" + indent(chatApp, "    ")
	ex := suiteWith(t, "{for: App, owns: [Deployment]}", "owner", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: other}\n", steps, "",
		`{writes: ["create Deployment (failed: AlreadyExists)", "update-status App chat Ready False ResourceExists"]}`)
	mustPass(t, run(ex, 1, ownerRef))
}

// Time passes between workload steps where the world says so, and not
// otherwise: a status written after a step carries a later time.
func TestStepGapMovesTheClock(t *testing.T) {
	for _, gap := range []time.Duration{0, time.Minute} {
		ex := ownerSuite(t, chatApp, `- patch: {App/chat: {spec: {image: "vllm:0.7"}}}`, "")
		ex.Suite.World.StepGap = exercise.Duration(gap)
		tc := ex.Suite.Tests[0]
		s := newSim(context.Background(), startNative(ownerRef), ex.Suite, tc, exercise.TestSeed(1, tc.Name))
		s.play(tc)
		if s.fail != nil {
			t.Fatalf("gap %s: %s: %s", gap, s.fail.oracle, s.fail.message)
		}
		if got := time.Duration(s.clock.Now); got != gap {
			t.Errorf("gap %s: the clock ends at %s", gap, got)
		}
	}
}

// A chapter lists its exercises in their own order, not by number: 175,
// written last, is the course's first; the catalog's list stays by number.
func TestChaptersKeepTheirExercisesOrder(t *testing.T) {
	c := catalog(t)
	var got []string
	for _, ch := range c.Chapters {
		var ids []string
		for _, e := range ch.Exercises {
			ids = append(ids, e.ID())
		}
		got = append(got, ch.Slug+": "+strings.Join(ids, " "))
	}
	want := []string{"controller-pattern: 175 171 174", "status-and-finalizers: 172 176 173"}
	if !slices.Equal(got, want) {
		t.Errorf("chapters %q, want %q", got, want)
	}
	var all []string
	for _, e := range c.Exercises {
		all = append(all, e.ID())
	}
	if strings.Join(all, " ") != "171 172 173 174 175 176" {
		t.Errorf("the catalog lists %v, want them by number", all)
	}
}
