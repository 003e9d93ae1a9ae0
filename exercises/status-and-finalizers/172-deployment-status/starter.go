//go:build ignore

package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

// Reconcile is called with a Deployment's key whenever the Deployment or one
// of its Pods changes. It should keep the Deployment's status true to its
// Pods, and write only when the stored status is wrong.
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
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	// BUG: which spec does this status describe? A reader of the
	// Deployment cannot tell.
	var st ctrl.DeploymentStatus
	for i := range pods.Items {
		p := &pods.Items[i]
		// BUG: a Failed Pod is still in the list. Is it still one of the
		// Deployment's replicas?
		if p.DeletionTimestamp != nil {
			continue
		}
		st.Replicas++
		if ctrl.PodImage(&p.Spec) == image {
			st.UpdatedReplicas++
		}
		if ctrl.IsPodReady(p) {
			st.ReadyReplicas++
			if ctrl.PodImage(&p.Spec) == image {
				st.AvailableReplicas++
			}
		}
	}

	// BUG: this writes on every call, even when the stored status is
	// already right. What does a call with nothing to do cost?
	d.Status = st
	if err := c.UpdateStatus(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
