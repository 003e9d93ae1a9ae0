package deployment

import (
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"sort"
	"strconv"
)

// Family is the model: each Deployment owns Replicas Pods on its template's
// image, all Ready; a rollout never exceeds Replicas+MaxSurge Pods and never
// deletes a Ready Pod when that leaves fewer than Replicas-MaxUnavailable
// Ready.
type Family struct{}

func (Family) Detail(o ctrl.Object) string {
	if p, ok := o.(*ctrl.Pod); ok {
		return ctrl.PodImage(&p.Spec)
	}
	return ""
}

// ownedPods returns the Deployment's live Pods (not failed, not being
// deleted) and its failed ones.
func ownedPods(w family.World, d *ctrl.Deployment) (live, failed []*ctrl.Pod) {
	for _, o := range w.List(ctrl.KindPod) {
		p := o.(*ctrl.Pod)
		if p.Namespace != d.Namespace || !ctrl.IsControlledBy(p, d) || p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			failed = append(failed, p)
		} else {
			live = append(live, p)
		}
	}
	return live, failed
}

func (Family) Converged(w family.World) (bool, string) {
	deps := map[string]bool{}
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		deps[d.UID] = true
		if d.DeletionTimestamp != nil {
			continue
		}
		live, failed := ownedPods(w, d)
		img := ctrl.PodImage(&d.Spec.Template.Spec)
		ok := len(live) == int(d.Spec.Replicas) && len(failed) == 0
		for _, p := range live {
			ok = ok && ctrl.PodImage(&p.Spec) == img && ctrl.IsPodReady(p)
		}
		if !ok {
			all := append(live, failed...)
			sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
			return false, "Deployment " + d.Name + " wants " + text.Pods(int(d.Spec.Replicas)) + " on image " + img +
				", all Ready; the cluster has " + text.Pods(len(all)) + ": " + family.DescribePods(all) + "."
		}
	}
	// Pods of a deleted Deployment are the garbage collector's, not the
	// controller's, so nothing to check for them.
	return true, ""
}

func (m Family) CheckWrite(w family.World, wr *family.Write) (string, *verdict.Violation) {
	p, ok := wr.Object.(*ctrl.Pod)
	if !ok {
		return "", nil
	}
	ref := ctrl.GetControllerOf(p)
	if ref == nil || ref.Kind != string(ctrl.KindDeployment) {
		if wr.Verb == "delete" || wr.Verb == "update" {
			// A Pod with the labels but not the owner is someone else's.
			whose := "it has no controller owner"
			if ref != nil {
				whose = "its controller is " + ref.Kind + " " + ref.Name
			}
			return "Your controller " + wr.Verb + "d Pod " + p.Name + ", which no Deployment owns (" + whose +
				"), though it carries a Deployment's labels. A Deployment's Pods are those whose controller owner reference names it: list them with ctrl.OwnedBy.", nil
		}
		return "", nil
	}
	var d *ctrl.Deployment
	for _, o := range w.List(ctrl.KindDeployment) {
		if o.GetObjectMeta().UID == ref.UID {
			d = o.(*ctrl.Deployment)
		}
	}
	if d == nil {
		return "", nil
	}
	r := d.Spec.Replicas
	surge, unavail := d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable
	live, _ := ownedPods(w, d)
	switch wr.Verb {
	case "create":
		if max := int(r + surge); len(live) > max {
			return "Creating " + p.Name + " made " + text.Pods(len(live)) + " for Deployment " + d.Name +
					"; with replicas " + text.Itoa(r) + " and maxSurge " + text.Itoa(surge) + " there may be at most " + strconv.Itoa(max) + ".",
				&verdict.Violation{Line: verdict.LineActual, Value: len(live), Bound: max}
		}
	case "delete":
		if wr.Before == nil || !ctrl.IsPodReady(wr.Before.(*ctrl.Pod)) {
			return "", nil
		}
		ready := 0
		for _, q := range live {
			if ctrl.IsPodReady(q) {
				ready++
			}
		}
		if min := int(r - unavail); ready < min {
			return "Deleting the Ready Pod " + p.Name + " left " + strconv.Itoa(ready) + " Ready for Deployment " + d.Name +
					"; with replicas " + text.Itoa(r) + " and maxUnavailable " + text.Itoa(unavail) + " at least " + strconv.Itoa(min) + " must stay Ready.",
				&verdict.Violation{Line: verdict.LineReady, Value: ready, Bound: min}
		}
	}
	return "", nil
}

func (Family) Sample(w family.World) (desired, actual, ready int) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.DeletionTimestamp != nil {
			continue
		}
		desired += int(d.Spec.Replicas)
		live, _ := ownedPods(w, d)
		img := ctrl.PodImage(&d.Spec.Template.Spec)
		actual += len(live)
		for _, p := range live {
			if ctrl.IsPodReady(p) && ctrl.PodImage(&p.Spec) == img {
				ready++
			}
		}
	}
	return desired, actual, ready
}

func (Family) GenKinds() (steps, objects []string) {
	return family.PodSteps, family.PodObjects
}
func (Family) GenWorld(g *family.Gen)                  { family.PodWorld(g, false) }
func (Family) GenStep(g *family.Gen, kind string) bool { return family.PodStep(g, kind) }
func (Family) Space(gb *exercise.Generate) []string    { return family.PodSpace(gb) }
