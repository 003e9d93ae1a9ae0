// bug: lists Pods by the selector's labels instead of by owner, so Pods of someone else (or of no one) are counted
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
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
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	st := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		st.Replicas++
		upd := ctrl.PodImage(&p.Spec) == image
		if upd {
			st.UpdatedReplicas++
		}
		if ctrl.IsPodReady(&p) {
			st.ReadyReplicas++
			if upd {
				st.AvailableReplicas++
			}
		}
	}
	if st != d.Status {
		d.Status = st
		return ctrl.Result{}, c.UpdateStatus(ctx, &d)
	}
	return ctrl.Result{}, nil
}
