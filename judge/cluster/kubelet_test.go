package cluster

import (
	"testing"
	"time"

	"ctrljudge/judge/ctrl"
)

// kubeletWith wires a kubelet and a garbage collector to a test server,
// starting each new Pod as the sim does, and records who wrote.
func kubeletWith() (*APIServer, *Kubelet, *GarbageCollector, *[]string) {
	api, _ := newTestServer()
	c := &Clock{}
	rec := NewRecorder(c)
	var actors []string
	as := func(a string, do func()) { actors = append(actors, a); do() }
	k := &Kubelet{Clock: c, API: api, Rec: rec, ReadyAfter: 3 * time.Second, As: as}
	api.Watch = func(ev WatchEvent) {
		if p, ok := ev.Object.(*ctrl.Pod); ok && ev.Type == EvAdded && p.Status.Phase == "" {
			k.StartPod(p)
		}
	}
	return api, k, &GarbageCollector{API: api, Rec: rec, As: as}, &actors
}

func podPhase(api *APIServer, name string) ctrl.PodPhase {
	if p := api.Get(ctrl.KindPod, "default", name); p != nil {
		return p.(*ctrl.Pod).Status.Phase
	}
	return "gone"
}

func TestKubeletStartsAPodInStages(t *testing.T) {
	api, k, _, actors := kubeletWith()
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "p", Namespace: "default"}}, false)
	if podPhase(api, "p") != "" {
		t.Fatal("the Pod changed before its first stage fired")
	}
	k.Clock.FireNext()
	if podPhase(api, "p") != ctrl.PodPending || k.Clock.Now != 0 {
		t.Fatalf("first stage: %q at %v", podPhase(api, "p"), k.Clock.Now)
	}
	k.Clock.FireNext()
	p := api.Get(ctrl.KindPod, "default", "p").(*ctrl.Pod)
	if p.Status.Phase != ctrl.PodRunning || !ctrl.IsPodReady(p) || k.Clock.Now != 3*time.Second {
		t.Fatalf("second stage: %+v at %v", p.Status, k.Clock.Now)
	}
	if join(*actors) != "kubelet kubelet" {
		t.Fatalf("written by %v", *actors)
	}
	if l := k.Rec.trace[len(k.Rec.trace)-1]; l.Actor != "kubelet" || l.T != 3000 {
		t.Fatalf("trace %+v", l)
	}
}

func TestKubeletLeavesAPodThatChangedMeanwhile(t *testing.T) {
	api, k, _, _ := kubeletWith()
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "failed", Namespace: "default"}}, false)
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "replaced", Namespace: "default"}}, false)
	k.Clock.FireNext()
	k.Clock.FireNext()
	api.SetPodStatus("default", "failed", FailedStatus())
	// Deleted and created again under the same name: a new uid, its own
	// stages.
	api.Delete(ctrl.KindPod, "default", "replaced")
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "replaced", Namespace: "default"}}, false)
	for k.Clock.FireNext() {
	}
	if podPhase(api, "failed") != ctrl.PodFailed {
		t.Fatalf("a Failed Pod became %q", podPhase(api, "failed"))
	}
	if podPhase(api, "replaced") != ctrl.PodRunning || k.Clock.Now != 3*time.Second {
		t.Fatalf("the new Pod is %q at %v", podPhase(api, "replaced"), k.Clock.Now)
	}
}

func TestGarbageCollectorDeletesOrphansUntilNoneAreLeft(t *testing.T) {
	api, _, gc, actors := kubeletWith()
	d, _ := api.Create(deployment("web", 1, "v1"), false)
	p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "web-1", Namespace: "default"}, Status: ctrl.PodStatus{Phase: ctrl.PodRunning}}
	ctrl.SetControllerReference(d, p)
	api.Create(p, false)
	if gc.Collect() {
		t.Fatal("collected while the owner lives")
	}
	api.Delete(ctrl.KindDeployment, "default", "web")
	if !gc.Collect() || podPhase(api, "web-1") != "gone" {
		t.Fatal("the orphan was not deleted")
	}
	if gc.Collect() {
		t.Fatal("collected again with no orphans left")
	}
	if join(*actors) != "gc" || gc.Rec.trace[0].Actor != "gc" {
		t.Fatalf("written by %v, traced %+v", *actors, gc.Rec.trace)
	}
}

// A Pod whose image the registry lacks goes Pending and stays there, as
// with ErrImagePull: no later stage, never Ready; others run as usual.
func TestKubeletLeavesAPodWithAMissingImagePending(t *testing.T) {
	api, k, _, _ := kubeletWith()
	k.Missing = []string{"*:broken"}
	pod := func(name, image string) *ctrl.Pod {
		return &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: name, Namespace: "default"},
			Spec: ctrl.PodSpec{Containers: []ctrl.Container{{Name: "c", Image: image}}}}
	}
	api.Create(pod("stuck", "vllm:broken"), false)
	api.Create(pod("fine", "vllm:0.7"), false)
	for k.Clock.FireNext() {
	}
	p := api.Get(ctrl.KindPod, "default", "stuck").(*ctrl.Pod)
	if p.Status.Phase != ctrl.PodPending || ctrl.IsPodReady(p) {
		t.Fatalf("a Pod with a missing image: %+v", p.Status)
	}
	if podPhase(api, "fine") != ctrl.PodRunning {
		t.Fatalf("a Pod whose image exists: %q", podPhase(api, "fine"))
	}
}
