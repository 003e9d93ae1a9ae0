package cluster

import (
	"path"
	"time"

	"ctrljudge/judge/ctrl"
)

// How fast new Pods become Ready (World.PodReady, Test.PodReady).
const (
	// ReadySoon: Running and Ready readyAfter after creation, which the
	// simulation lets happen before the controller's next call.
	ReadySoon = "soon"
	// ReadyWhenIdle: Running (not Ready) at once; Ready only once the
	// controller is idle, one Pod at a time, so the controller sees Pods
	// that run but do not serve yet.
	ReadyWhenIdle = "when-idle"
	// ReadyNever: Running, and never Ready unless a test's ready step
	// says so.
	ReadyNever = "never"
)

var PodReadyModes = []string{ReadySoon, ReadyWhenIdle, ReadyNever}

// Kubelet runs the Pods: a new Pod is Pending at once, then Running and
// (as mode says) Ready readyAfter later on the virtual clock, unless it
// changed or went away meanwhile. Its stages are timers, so they fire when
// the simulation lets the world settle, never in the middle of a
// reconcile; with readyWhenIdle, readiness waits for the controller to be
// idle (readyNext).
type Kubelet struct {
	Clock      *Clock
	API        *APIServer
	Rec        *Recorder
	ReadyAfter time.Duration
	Mode       string   // readySoon (or ""), readyWhenIdle or readyNever
	waiting    []podRef // readyWhenIdle: Running Pods to make Ready, in order
	// Missing are the images the registry does not have, as path.Match
	// patterns ("*:v3"): a Pod whose first container runs one stays
	// Pending for ever, as with ErrImagePull, and is never Ready.
	Missing []string
	As      func(actor string, do func()) // writes as the kubelet
}

type podRef struct{ ns, name, uid string }

// StartPod sets the timers of a new Pod's stages.
func (k *Kubelet) StartPod(p *ctrl.Pod) {
	ref := podRef{p.Namespace, p.Name, p.UID}
	k.Clock.after(0, func() {
		if cur := k.pod(ref); cur != nil && cur.Status.Phase == "" {
			k.As("kubelet", func() { k.API.SetPodStatus(ref.ns, ref.name, ctrl.PodStatus{Phase: ctrl.PodPending}) })
		}
	})
	if image := ctrl.PodImage(&p.Spec); k.missing(image) {
		k.Rec.Logf("kubelet", "Pod ", ref.name, " stays Pending: image ", image, " cannot be pulled (ErrImagePull)")
		return
	}
	k.Clock.after(k.ReadyAfter, func() {
		cur := k.pod(ref)
		if cur == nil || cur.Status.Phase != ctrl.PodPending {
			return
		}
		if k.Mode == ReadyWhenIdle || k.Mode == ReadyNever {
			k.As("kubelet", func() { k.API.SetPodStatus(ref.ns, ref.name, RunningStatus(false)) })
			k.Rec.Logf("kubelet", "Pod ", ref.name, " is Running, not Ready yet")
			if k.Mode == ReadyWhenIdle {
				k.waiting = append(k.waiting, ref)
			}
			return
		}
		k.As("kubelet", func() { k.API.SetPodStatus(ref.ns, ref.name, RunningStatus(true)) })
		k.Rec.Logf("kubelet", "Pod ", ref.name, " is Running and Ready")
	})
}

// missing says whether the registry lacks image.
func (k *Kubelet) missing(image string) bool {
	for _, pat := range k.Missing {
		if ok, _ := path.Match(pat, image); ok {
			return true
		}
	}
	return false
}

// pod returns the stored Pod ref names, if it is still the same Pod.
func (k *Kubelet) pod(ref podRef) *ctrl.Pod {
	cur, _ := k.API.Get(ctrl.KindPod, ref.ns, ref.name).(*ctrl.Pod)
	if cur == nil || cur.UID != ref.uid {
		return nil
	}
	return cur
}

// ReadyNext makes the first waiting Pod that still runs unready Ready,
// and says whether there was one. The simulation calls it when the
// controller is idle.
func (k *Kubelet) ReadyNext() bool {
	for len(k.waiting) > 0 {
		ref := k.waiting[0]
		k.waiting = k.waiting[1:]
		cur := k.pod(ref)
		if cur == nil || cur.DeletionTimestamp != nil || cur.Status.Phase != ctrl.PodRunning || ctrl.IsPodReady(cur) {
			continue
		}
		k.As("kubelet", func() { k.API.SetPodStatus(ref.ns, ref.name, RunningStatus(true)) })
		k.Rec.Logf("kubelet", "Pod ", ref.name, " is Ready")
		return true
	}
	return false
}

// RunningStatus is a Running Pod's status, Ready or not.
func RunningStatus(ready bool) ctrl.PodStatus {
	st := ctrl.ConditionFalse
	if ready {
		st = ctrl.ConditionTrue
	}
	return ctrl.PodStatus{Phase: ctrl.PodRunning, Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: st}}}
}

// FailedStatus is the status of a Pod whose container crashed for good.
func FailedStatus() ctrl.PodStatus {
	return ctrl.PodStatus{Phase: ctrl.PodFailed,
		Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionFalse}}}
}

// GarbageCollector deletes objects whose owner is gone, as the cluster's
// garbage collector does with background propagation.
type GarbageCollector struct {
	API *APIServer
	Rec *Recorder
	As  func(actor string, do func())
}

// Collect deletes today's orphans and says whether there were any; their
// deletion may orphan others, so the caller asks again.
func (g *GarbageCollector) Collect() bool {
	orphans := g.API.orphans()
	for _, o := range orphans {
		m := o.GetObjectMeta()
		g.As("gc", func() { g.API.Delete(o.GetObjectKind(), m.Namespace, m.Name) })
		g.Rec.Logf("gc", "deleted ", string(o.GetObjectKind()), " ", m.Name, " (its owner is gone)")
	}
	return len(orphans) > 0
}
