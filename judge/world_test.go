package judge

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// The world's object kinds and step kinds that generated scenarios draw
// from, each checked with a native controller.

// heldPod is a Pod of web's being deleted, held by another controller's
// finalizer.
func heldPod(name, image string) string {
	return strings.Replace(podYAML(name, image), "  labels: {app: web}\n",
		"  labels: {app: web}\n  finalizers: [example.com/hold]\n  deletionTimestamp: \"2026-01-01T00:00:00Z\"\n", 1)
}

// countsTerminating is the stepper with one bug: Pods being deleted count.
func countsTerminating() ctrl.Reconciler {
	good := stepper()
	return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
		return good(ctx, &hideDeletion{c}, req)
	}
}

// hideDeletion is a client that blanks deletionTimestamp in every list.
type hideDeletion struct{ ctrl.Client }

func (h *hideDeletion) List(ctx context.Context, l ctrl.ObjectList, opts ...ctrl.ListOption) error {
	err := h.Client.List(ctx, l, opts...)
	if pl, ok := l.(*ctrl.PodList); ok {
		for i := range pl.Items {
			pl.Items[i].DeletionTimestamp = nil
		}
	}
	return err
}

func TestATerminatingPodStaysUntilReleased(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1") + podYAML("web-a", "v1") + heldPod("web-b", "v1")
	ex := suite(t, objs, "- release: {Pod/web-b: [example.com/hold]}", "", `{writes: ["create Pod v1"]}`)
	var seen []bool
	r := func() ctrl.Reconciler {
		good := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var list ctrl.PodList
			c.List(ctx, &list, ctrl.InNamespace(req.Namespace))
			held := false
			for _, p := range list.Items {
				held = held || p.Name == "web-b" && p.DeletionTimestamp != nil
			}
			seen = append(seen, held)
			return good(ctx, c, req)
		}
	}
	res := run(ex, 1, r)
	mustPass(t, res)
	if !seen[0] || seen[len(seen)-1] {
		t.Fatalf("web-b was held %v over the calls; want held at first, gone at the end", seen)
	}
	mustFail(t, run(suite(t, objs, "", "", ""), 1, countsTerminating), "convergence")
}

func TestAManifestMayNotBeDeletedWithoutAFinalizer(t *testing.T) {
	y := "controller: {for: Deployment}\nmodel: deployment\ntests:\n- name: t\n  sample: true\n  objects: |\n" +
		indent(strings.Replace(fmt.Sprintf(deploymentYAML, 1, "v1"), "metadata: {name: web}", "metadata: {name: web, deletionTimestamp: \"2026-01-01T00:00:00Z\"}", 1), "    ")
	if _, err := exercise.ParseSuite("t.yaml", []byte(y), Checks); err == nil || !strings.Contains(err.Error(), "needs finalizers") {
		t.Fatalf("err = %v", err)
	}
}

// readiness records, at every call, the Pods that run but are not Ready.
func readiness(seen *[]string) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
		good := stepper()
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var list ctrl.PodList
			c.List(ctx, &list, ctrl.InNamespace(req.Namespace))
			var unready []string
			for _, p := range list.Items {
				if p.Status.Phase == ctrl.PodRunning && !ctrl.IsPodReady(&p) {
					unready = append(unready, p.Name)
				}
			}
			*seen = append(*seen, strings.Join(unready, " "))
			return good(ctx, c, req)
		}
	}
}

func TestReadinessFlips(t *testing.T) {
	objs := fmt.Sprintf(deploymentYAML, 2, "v1") + podYAML("web-a", "v1") + podYAML("web-b", "v1")
	var seen []string
	// The stepper adds a Pod while web-b is not Ready, and removes one
	// once it is Ready again: the flips reach the controller.
	res := run(suite(t, objs, "- unready: Pod/web-b\n- ready: Pod/all", "", ""), 1, readiness(&seen))
	mustPass(t, res)
	if got := strings.Join(seen, "|"); !strings.Contains(got, "web-b") {
		t.Fatalf("the controller never saw web-b unready: %q", got)
	}
	if res := run(suite(t, objs, "- unready: Pod/nosuch", "", ""), 1, stepper); res.Oracle != verdict.OracleSetup {
		t.Fatalf("unready of a missing Pod: %s %s", res.Oracle, res.Message)
	}
}

func TestPodsReadyWhenIdle(t *testing.T) {
	ex := suite(t, fmt.Sprintf(deploymentYAML, 2, "v1"), "", "", "")
	ex.Suite.Tests[0].PodReady = cluster.ReadyWhenIdle
	var seen []string
	mustPass(t, run(ex, 1, readiness(&seen)))
	if got := strings.Join(seen, "|"); !strings.Contains(got, "web-") {
		t.Fatalf("the controller never saw a new Pod Running but not Ready: %q", got)
	}
	// Never Ready: the model waits for all Ready, so the test cannot converge.
	ex.Suite.Tests[0].PodReady = cluster.ReadyNever
	mustFail(t, run(ex, 1, stepper), "convergence")
}

// labeller puts a label on each Deployment, from what it read.
func labeller(retryFresh bool, conflicts *int, last *map[string]string) func() ctrl.Reconciler {
	return func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var d ctrl.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				if ctrl.IsNotFound(err) {
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, err
			}
			*last = d.Labels
			if d.Labels["seen"] == d.Spec.Template.Spec.Containers[0].Image {
				return ctrl.Result{}, nil
			}
			if d.Labels == nil {
				d.Labels = map[string]string{}
			}
			d.Labels["seen"] = d.Spec.Template.Spec.Containers[0].Image
			err := c.Update(ctx, &d)
			if ctrl.IsConflict(err) {
				*conflicts++
			}
			if ctrl.IsConflict(err) && !retryFresh {
				// The bug: write again without the precondition, over
				// whatever changed meanwhile.
				d.ResourceVersion = ""
				err = c.Update(ctx, &d)
			}
			return ctrl.Result{}, err
		}
	}
}

func TestMeanwhileEditsMakeRealConflicts(t *testing.T) {
	steps := "- meanwhile: {Deployment/web: {metadata: {labels: {team: shop}}}}\n" +
		"- patch: {Deployment/web: {spec: {template: {spec: {containers: [{name: app, image: v2}]}}}}}"
	ex := suite(t, fmt.Sprintf(deploymentYAML, 0, "v1"), steps, "", "")
	ex.Suite.Controller.Owns = nil
	for _, fresh := range []bool{true, false} {
		conflicts, last := 0, map[string]string{}
		mustPass(t, run(ex, 1, labeller(fresh, &conflicts, &last)))
		if conflicts == 0 {
			t.Fatal("the edit made no conflict")
		}
		if kept := last["team"] == "shop"; kept != fresh {
			t.Fatalf("retry with a fresh read %v: labels at the end %v", fresh, last)
		}
	}
}
