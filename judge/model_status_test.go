package judge

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family/status"
	"ctrljudge/judge/verdict"
)

// These tests drive the deployment-status model with native reconcilers
// (see sim_test.go): a correct reporter passes under every fault exercise
// 172 plans, and wrong reporters fail with the oracle and the words a
// learner should see. model_status_def_test.go checks the model itself
// against the statement's worked example, by hand.

const statusDeploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: v1}]}
`

// statusPodYAML is a Pod of web; status "" leaves it to the kubelet.
func statusPodYAML(name, image, status string) string {
	y := fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata:
  name: %s
  ownerReferences: [{kind: Deployment, name: web, controller: true}]
spec: {containers: [{name: app, image: %s}]}
`, name, image)
	if status != "" {
		y += "status: " + status + "\n"
	}
	return y
}

const (
	podReadyStatus    = `{phase: Running, conditions: [{type: Ready, status: "True"}]}`
	podNotReadyStatus = `{phase: Running, conditions: [{type: Ready, status: "False"}]}`
)

// statusWorld is web with three Ready Pods on v1 and an empty status.
func statusWorld() string {
	return statusDeploymentYAML + statusPodYAML("web-0a", "v1", podReadyStatus) +
		statusPodYAML("web-0b", "v1", podReadyStatus) + statusPodYAML("web-0c", "v1", podReadyStatus)
}

// statusWork changes what the status must say: a Pod fails, the image
// changes (a new generation), a new Pod arrives, an old one goes.
const statusWork = `- fail: Pod/first
- patch: {Deployment/web: {spec: {template: {spec: {containers: [{name: app, image: v2}]}}}}}
- apply: |
    apiVersion: v1
    kind: Pod
    metadata:
      name: web-1a
      ownerReferences: [{kind: Deployment, name: web, controller: true}]
    spec: {containers: [{name: app, image: v2}]}
- delete: Pod/web-0b`

// statusSuite builds a one-test suite on the deployment-status model.
func statusSuite(t *testing.T, objects, steps, faults, expect string) *exercise.Exercise {
	t.Helper()
	ex := suiteWith(t, "{for: Deployment, owns: [Pod]}", "deployment-status", objects, steps, faults, expect)
	ex.Number = 1
	return ex
}

// statusOptions vary the reference reporter into the mistakes exercise
// 172's mutants make.
type statusOptions struct {
	alwaysWrite     bool // skip the comparison with the stored status
	noGeneration    bool // leave observedGeneration out
	countFailed     bool // count Failed Pods
	swallowConflict bool // return nil on a Conflict
	useUpdate       bool // Update instead of UpdateStatus
	countWrites     bool // observedGeneration + 1 on every write
	deletesFailed   bool // also "helps" by deleting a Failed Pod
	conflicts       *int // counts the Conflicts it receives
}

func statusReporter(o statusOptions) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
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
			img := ctrl.PodImage(&d.Spec.Template.Spec)
			var st ctrl.DeploymentStatus
			if !o.noGeneration {
				st.ObservedGeneration = d.Generation
			}
			if o.countWrites {
				st.ObservedGeneration = d.Status.ObservedGeneration
			}
			// The counts come from the statement's table, as the model
			// reads it, over the Pods in this controller's cache; the
			// reference solution's own loop is judged end to end by the
			// integration tests, never copied here.
			counted := status.Staying
			if o.countFailed {
				counted = func(p *ctrl.Pod) bool { return p.DeletionTimestamp == nil }
			}
			for i := range list.Items {
				if p := &list.Items[i]; o.deletesFailed && p.DeletionTimestamp == nil && p.Status.Phase == ctrl.PodFailed {
					return ctrl.Result{}, c.Delete(ctx, p)
				}
			}
			for _, row := range status.StatusTable {
				n := int32(0)
				for i := range list.Items {
					if p := &list.Items[i]; counted(p) && row.Counts(p, img) {
						n++
					}
				}
				*row.Field(&st) = n
			}
			if d.Status == st && !o.alwaysWrite {
				return ctrl.Result{}, nil
			}
			if o.countWrites {
				st.ObservedGeneration++
			}
			d.Status = st
			write := c.UpdateStatus
			if o.useUpdate {
				write = c.Update
			}
			err := write(ctx, &d)
			if ctrl.IsConflict(err) {
				if o.conflicts != nil {
					*o.conflicts++
				}
				if o.swallowConflict {
					return ctrl.Result{}, nil
				}
			}
			return ctrl.Result{}, err
		}
	}
}

func TestStatusReferenceSurvivesEveryPlannedFault(t *testing.T) {
	// Pods failing and vanishing at random would leave the workload's own
	// "fail: Pod/first" without a Running Pod, so they get steps of their own.
	groups := []struct{ faults, steps string }{
		{"conflict, duplicate, restart, crash-after-write, missed-event, stale-read", statusWork},
		{"pod-failure, manual-delete, duplicate", statusWork[strings.Index(statusWork, "- patch"):strings.Index(statusWork, "- delete")]},
	}
	for _, g := range groups {
		ex := statusSuite(t, statusWorld(), g.steps, g.faults, "")
		fired := map[verdict.Fault]int{}
		for seed := uint64(1); seed <= 30; seed++ {
			r := runTest(context.Background(), startNative(statusReporter(statusOptions{})), ex, ex.Suite.Tests[0], seed, "t.go")
			mustPass(t, r)
			for _, f := range r.FaultClasses {
				fired[f]++
			}
		}
		for _, f := range strings.Split(g.faults, ", ") {
			if fired[verdict.Fault(f)] < 25 {
				t.Errorf("fault %s fired in only %d of 30 seeds", f, fired[verdict.Fault(f)])
			}
		}
	}
}

func TestStatusExactWrites(t *testing.T) {
	ex := statusSuite(t, statusWorld(), statusWork, "", `{writes: [
    "update-status Deployment replicas 3, updated 3, ready 3, available 3, observedGeneration 1",
    "update-status Deployment replicas 2, updated 2, ready 2, available 2, observedGeneration 1",
    "update-status Deployment replicas 2, updated 0, ready 2, available 0, observedGeneration 2",
    "update-status Deployment replicas 3, updated 1, ready 3, available 1, observedGeneration 2",
    "update-status Deployment replicas 2, updated 1, ready 2, available 1, observedGeneration 2"]}`)
	mustPass(t, run(ex, 1, statusReporter(statusOptions{})))
}

// A stale cache shows the controller its old status and resourceVersion,
// so comparing may send the write again when it is called before the cache
// catches up (here by a duplicate event); the server answers Conflict, and
// the reporter that returns it is called again and heals.
func TestStatusStaleReadsBringRealConflicts(t *testing.T) {
	ex := statusSuite(t, statusWorld(), statusWork, "stale-read, duplicate", "")
	total := 0
	for seed := uint64(1); seed <= 20; seed++ {
		n := 0
		r := run(ex, seed, statusReporter(statusOptions{conflicts: &n}))
		mustPass(t, r)
		total += n
	}
	if total == 0 {
		t.Fatal("stale reads never made a status write conflict")
	}
}

func TestStatusOracles(t *testing.T) {
	withFailure := statusDeploymentYAML + statusPodYAML("web-0a", "v1", podReadyStatus) +
		statusPodYAML("web-0b", "v1", podNotReadyStatus) + statusPodYAML("web-0c", "v1", `{phase: Failed}`)
	cases := []struct {
		name, objects, steps, faults string
		opts                         statusOptions
		oracle, contains             string
	}{
		{"writes on every call", statusWorld(), "", "", statusOptions{alwaysWrite: true},
			"idempotency", "update-status Deployment replicas 3, updated 3, ready 3, available 3, observedGeneration 1"},
		{"forgets observedGeneration", statusWorld(), "", "", statusOptions{noGeneration: true},
			"convergence", "status.observedGeneration is 0, but metadata.generation is 1"},
		{"counts a Failed Pod", withFailure, "", "", statusOptions{countFailed: true},
			"convergence", "status.replicas is 3, but the Deployment has 2 Pods; status.updatedReplicas is 3, but it has 2 Pods on the template's image v1"},
		{"writes with Update", statusWorld(), "", "", statusOptions{useUpdate: true},
			"convergence", "status.readyReplicas is 0, but it has 3 Ready Pods"},
		{"counts writes in observedGeneration", statusWorld(), "- fail: Pod/first", "", statusOptions{countWrites: true},
			"safety", "set status.observedGeneration to 2, but the Deployment is only at generation 1"},
		{"deletes a Failed Pod", statusWorld(), "- fail: Pod/first", "", statusOptions{deletesFailed: true},
			"safety", "wrote to Pod web-0a (delete)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(statusSuite(t, c.objects, c.steps, c.faults, ""), 1, statusReporter(c.opts))
			mustFail(t, r, c.oracle)
			if !strings.Contains(r.Message, c.contains) {
				t.Errorf("message %q lacks %q", r.Message, c.contains)
			}
			if r.Hint != status.StatusHints[verdict.Oracle(c.oracle)] {
				t.Errorf("hint %q, want the model's own", r.Hint)
			}
		})
	}
}

func TestStatusConvergenceNamesThePods(t *testing.T) {
	objs := statusDeploymentYAML + statusPodYAML("web-0a", "v1", podReadyStatus) +
		statusPodYAML("web-0b", "v1", podNotReadyStatus) + statusPodYAML("web-0c", "v1", `{phase: Failed}`)
	r := run(statusSuite(t, objs, "", "", ""), 1, func() ctrl.Reconciler {
		return func(context.Context, ctrl.Client, ctrl.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }
	})
	mustFail(t, r, "convergence")
	want := "Deployment web: status.replicas is 0, but the Deployment has 2 Pods; " +
		"status.updatedReplicas is 0, but it has 2 Pods on the template's image v1; " +
		"status.readyReplicas is 0, but it has 1 Ready Pod; " +
		"status.availableReplicas is 0, but it has 1 Ready Pod on the template's image v1 " +
		"(a Failed Pod, or one being deleted, counts in none of these). " +
		"status.observedGeneration is 0, but metadata.generation is 1: the status does not say that it describes the current spec. "
	if r.Trace[0].Event != "the test starts with Deployment web (image v1, no status yet)" {
		t.Errorf("trace starts with %q", r.Trace[0].Event)
	}
	if !strings.Contains(r.Message, want) || !strings.Contains(r.Message, want+"Its Pods: web-0a v1 Ready, web-0b v1 not Ready, web-0c v1 Failed.") {
		t.Fatalf("message: %s", r.Message)
	}
}

// A conflict given up on: the other writer's own event brings the
// controller back, so the status is written after all; the rule that a
// Conflict is passed on catches it, at every seed.
func TestStatusSwallowedConflictIsLost(t *testing.T) {
	objs := statusDeploymentYAML + "status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3}\n"
	objs += statusPodYAML("web-0a", "v1", podReadyStatus) + statusPodYAML("web-0b", "v1", podReadyStatus) +
		statusPodYAML("web-0c", "v1", podReadyStatus)
	ex := statusSuite(t, objs, "- fail: Pod/first", "conflict", "")
	ex.Suite.Rules.PassOnConflicts = true
	for seed := uint64(1); seed <= 20; seed++ {
		mustPass(t, run(ex, seed, statusReporter(statusOptions{})))
		mustFail(t, run(ex, seed, statusReporter(statusOptions{swallowConflict: true})), "swallowed_conflict")
	}
}
