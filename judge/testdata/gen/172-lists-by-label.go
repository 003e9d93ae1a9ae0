// Bug: lists Pods by the selector's labels instead of by owner.
package main

import (
	"context"
	"strconv"

	"ctrljudge/judge/ctrl"
)

// Reconcile reports what a Deployment's Pods are doing in its status. It
// writes only when the stored status is wrong, so its own write, which
// brings it back here, finds nothing left to do.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted: no status to keep
		}
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var pods ctrl.PodList
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return ctrl.Result{}, err
	}
	want := computeStatus(&d, pods.Items)

	// Compare before writing: an unchanged status is no work at all.
	if d.Status == want {
		return ctrl.Result{}, nil
	}
	d.Status = want
	// UpdateStatus sends our resourceVersion along. If the Deployment
	// changed since the cache read it, the server answers Conflict:
	// returning that error requeues us, and the next call starts from the
	// newer Deployment (with perhaps a newer generation) instead of
	// overwriting it.
	if err := c.UpdateStatus(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.Log("status of", d.Name, "now: replicas", itoa(want.Replicas), "updated", itoa(want.UpdatedReplicas),
		"ready", itoa(want.ReadyReplicas), "available", itoa(want.AvailableReplicas),
		"observedGeneration", strconv.FormatInt(want.ObservedGeneration, 10))
	return ctrl.Result{}, nil
}

// computeStatus counts the Pods as the status fields define them. Pods on
// their way out and Pods that failed are not part of the Deployment any
// more, so they count in none of the fields.
func computeStatus(d *ctrl.Deployment, pods []ctrl.Pod) ctrl.DeploymentStatus {
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	// The counts below describe the spec as read in this call: that
	// generation is the one the status may claim.
	st := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		current := ctrl.PodImage(&p.Spec) == image
		ready := ctrl.IsPodReady(p)
		st.Replicas++
		if current {
			st.UpdatedReplicas++
		}
		if ready {
			st.ReadyReplicas++
		}
		if ready && current {
			st.AvailableReplicas++
		}
	}
	return st
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
