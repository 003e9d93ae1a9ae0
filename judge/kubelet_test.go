package judge

import (
	"testing"
	"time"

	"ctrljudge/judge/ctrl"
)

// kubeletWith wires a kubelet and a garbage collector to a test server,
// starting each new Pod as the sim does, and records who wrote.
func kubeletWith() (*apiServer, *kubelet, *garbageCollector, *[]string) {
	api, _ := newTestServer()
	c := &clock{}
	rec := newRecorder(c)
	var actors []string
	as := func(a string, do func()) { actors = append(actors, a); do() }
	k := &kubelet{clock: c, api: api, rec: rec, readyAfter: 3 * time.Second, as: as}
	api.watch = func(ev watchEvent) {
		if p, ok := ev.Object.(*ctrl.Pod); ok && ev.Type == evAdded && p.Status.Phase == "" {
			k.startPod(p)
		}
	}
	return api, k, &garbageCollector{api: api, rec: rec, as: as}, &actors
}

func podPhase(api *apiServer, name string) ctrl.PodPhase {
	if p := api.get(ctrl.KindPod, "default", name); p != nil {
		return p.(*ctrl.Pod).Status.Phase
	}
	return "gone"
}

func TestKubeletStartsAPodInStages(t *testing.T) {
	api, k, _, actors := kubeletWith()
	api.create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "p", Namespace: "default"}}, false)
	if podPhase(api, "p") != "" {
		t.Fatal("the Pod changed before its first stage fired")
	}
	k.clock.fireNext()
	if podPhase(api, "p") != ctrl.PodPending || k.clock.now != 0 {
		t.Fatalf("first stage: %q at %v", podPhase(api, "p"), k.clock.now)
	}
	k.clock.fireNext()
	p := api.get(ctrl.KindPod, "default", "p").(*ctrl.Pod)
	if p.Status.Phase != ctrl.PodRunning || !ctrl.IsPodReady(p) || k.clock.now != 3*time.Second {
		t.Fatalf("second stage: %+v at %v", p.Status, k.clock.now)
	}
	if join(*actors) != "kubelet kubelet" {
		t.Fatalf("written by %v", *actors)
	}
	if l := k.rec.trace[len(k.rec.trace)-1]; l.Actor != "kubelet" || l.T != 3000 {
		t.Fatalf("trace %+v", l)
	}
}

func TestKubeletLeavesAPodThatChangedMeanwhile(t *testing.T) {
	api, k, _, _ := kubeletWith()
	api.create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "failed", Namespace: "default"}}, false)
	api.create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "replaced", Namespace: "default"}}, false)
	k.clock.fireNext()
	k.clock.fireNext()
	api.setPodStatus("default", "failed", failedStatus())
	// Deleted and created again under the same name: a new uid, its own
	// stages.
	api.delete(ctrl.KindPod, "default", "replaced")
	api.create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "replaced", Namespace: "default"}}, false)
	for k.clock.fireNext() {
	}
	if podPhase(api, "failed") != ctrl.PodFailed {
		t.Fatalf("a Failed Pod became %q", podPhase(api, "failed"))
	}
	if podPhase(api, "replaced") != ctrl.PodRunning || k.clock.now != 3*time.Second {
		t.Fatalf("the new Pod is %q at %v", podPhase(api, "replaced"), k.clock.now)
	}
}

func TestGarbageCollectorDeletesOrphansUntilNoneAreLeft(t *testing.T) {
	api, _, gc, actors := kubeletWith()
	d, _ := api.create(deployment("web", 1, "v1"), false)
	p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "web-1", Namespace: "default"}, Status: ctrl.PodStatus{Phase: ctrl.PodRunning}}
	ctrl.SetControllerReference(d, p)
	api.create(p, false)
	if gc.collect() {
		t.Fatal("collected while the owner lives")
	}
	api.delete(ctrl.KindDeployment, "default", "web")
	if !gc.collect() || podPhase(api, "web-1") != "gone" {
		t.Fatal("the orphan was not deleted")
	}
	if gc.collect() {
		t.Fatal("collected again with no orphans left")
	}
	if join(*actors) != "gc" || gc.rec.trace[0].Actor != "gc" {
		t.Fatalf("written by %v, traced %+v", *actors, gc.rec.trace)
	}
}
