package status

import (
	"math/rand/v2"
	"testing"
	"time"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
)

// The status model against exercise 172's statement alone: its worked
// example ("An image change, step by step") and its rule that a Pod being
// deleted or Failed counts in no field, with every expected status written
// out by hand rather than computed.
func TestStatusModelFollowsTheStatement(t *testing.T) {
	api := cluster.NewAPIServer(rand.New(rand.NewPCG(1, 2)), func() time.Time { return cluster.Epoch })
	var w family.World = api
	d, _ := api.Create(deployment("web", 3, "web:v1"), false)
	ready := ctrl.PodStatus{Phase: ctrl.PodRunning, Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionTrue}}}
	addPod := func(name, image string, st ctrl.PodStatus) {
		p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: name, Namespace: "default"}, Status: st}
		p.Spec.Containers = []ctrl.Container{{Name: "app", Image: image}}
		ctrl.SetControllerReference(d, p)
		if _, err := api.Create(p, true); err != nil {
			t.Fatal(err)
		}
	}
	current := func() *ctrl.Deployment { return api.Get(ctrl.KindDeployment, "default", "web").(*ctrl.Deployment) }
	check := func(after string, want ctrl.DeploymentStatus) {
		t.Helper()
		if got := wantStatus(w, current()); got != want {
			t.Errorf("after %s: %+v, want %+v", after, got, want)
		}
	}
	for _, n := range []string{"web-a", "web-b", "web-c"} {
		addPod(n, "web:v1", ready)
	}
	check("start", ctrl.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})

	next := ctrl.DeepCopy(current()).(*ctrl.Deployment)
	next.Spec.Template.Spec.Containers[0].Image = "web:v2"
	api.Update(next, false)
	check("new image", ctrl.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 0, ReadyReplicas: 3, AvailableReplicas: 0})

	addPod("web-d", "web:v2", ready)
	check("v2 Pod added", ctrl.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 4, AvailableReplicas: 1})

	api.Delete(ctrl.KindPod, "default", "web-a")
	check("v1 Pod deleted", ctrl.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 1})

	// Running is not Ready: counted, updated, neither ready nor available.
	addPod("web-e", "web:v2", ctrl.PodStatus{Phase: ctrl.PodRunning})
	check("a v2 Pod not yet Ready", ctrl.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 2, ReadyReplicas: 3, AvailableReplicas: 1})

	// A Failed Pod and a Ready one held by a finalizer while deleted count
	// in no field; a Pod of no Deployment does not either.
	addPod("web-f", "web:v2", ctrl.PodStatus{Phase: ctrl.PodFailed})
	held := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "web-g", Namespace: "default", Finalizers: []string{"example.com/hold"}}, Status: ready}
	held.Spec.Containers = []ctrl.Container{{Name: "app", Image: "web:v2"}}
	ctrl.SetControllerReference(d, held)
	api.Create(held, true)
	api.Delete(ctrl.KindPod, "default", "web-g")
	stray := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "stray", Namespace: "default"}, Status: ready}
	stray.Spec.Containers = []ctrl.Container{{Name: "app", Image: "web:v2"}}
	api.Create(stray, true)
	if api.Get(ctrl.KindPod, "default", "web-g").GetObjectMeta().DeletionTimestamp == nil {
		t.Fatal("the held Pod should be terminating")
	}
	check("a Failed, a terminating and a stray Pod", ctrl.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 2, ReadyReplicas: 3, AvailableReplicas: 1})
}

func deployment(name string, replicas int32, image string) *ctrl.Deployment {
	d := &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: name, Namespace: "default"}}
	d.Spec.Replicas = replicas
	d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "app", Image: image}}
	return d
}
