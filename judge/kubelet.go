package judge

import (
	"time"

	"ctrljudge/judge/ctrl"
)

// kubelet runs the Pods: a new Pod is Pending at once, then Running and
// Ready readyAfter later on the virtual clock, unless it changed or went
// away meanwhile. Its stages are timers, so they fire when the simulation
// lets the world settle, never in the middle of a reconcile.
type kubelet struct {
	clock      *clock
	api        *apiServer
	rec        *recorder
	readyAfter time.Duration
	as         func(actor string, do func()) // writes as the kubelet
}

// startPod sets the timers of a new Pod's stages.
func (k *kubelet) startPod(p *ctrl.Pod) {
	ns, name, uid := p.Namespace, p.Name, p.UID
	k.clock.after(0, func() {
		if cur := k.api.get(ctrl.KindPod, ns, name); cur != nil && cur.GetObjectMeta().UID == uid && cur.(*ctrl.Pod).Status.Phase == "" {
			k.as("kubelet", func() { k.api.setPodStatus(ns, name, ctrl.PodStatus{Phase: ctrl.PodPending}) })
		}
	})
	k.clock.after(k.readyAfter, func() {
		cur := k.api.get(ctrl.KindPod, ns, name)
		if cur == nil || cur.GetObjectMeta().UID != uid || cur.(*ctrl.Pod).Status.Phase != ctrl.PodPending {
			return
		}
		k.as("kubelet", func() {
			k.api.setPodStatus(ns, name, ctrl.PodStatus{Phase: ctrl.PodRunning,
				Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionTrue}}})
		})
		k.rec.logf("kubelet", "Pod ", name, " is Running and Ready")
	})
}

// failedStatus is the status of a Pod whose container crashed for good.
func failedStatus() ctrl.PodStatus {
	return ctrl.PodStatus{Phase: ctrl.PodFailed,
		Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionFalse}}}
}

// garbageCollector deletes objects whose owner is gone, as the cluster's
// garbage collector does with background propagation.
type garbageCollector struct {
	api *apiServer
	rec *recorder
	as  func(actor string, do func())
}

// collect deletes today's orphans and says whether there were any; their
// deletion may orphan others, so the caller asks again.
func (g *garbageCollector) collect() bool {
	orphans := g.api.orphans()
	for _, o := range orphans {
		m := o.GetObjectMeta()
		g.as("gc", func() { g.api.delete(o.GetObjectKind(), m.Namespace, m.Name) })
		g.rec.logf("gc", "deleted ", string(o.GetObjectKind()), " ", m.Name, " (its owner is gone)")
	}
	return len(orphans) > 0
}
