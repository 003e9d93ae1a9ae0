// bug: counts Pods that carry a deletionTimestamp (only Failed Pods are left out)
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
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	st := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	for _, p := range pods.Items {
		if p.Status.Phase == ctrl.PodFailed {
			continue
		}
		st.Replicas++
		if ctrl.PodImage(&p.Spec) == image {
			st.UpdatedReplicas++
			if ctrl.IsPodReady(&p) {
				st.AvailableReplicas++
			}
		}
		if ctrl.IsPodReady(&p) {
			st.ReadyReplicas++
		}
	}
	if st == d.Status {
		return ctrl.Result{}, nil
	}
	d.Status = st
	return ctrl.Result{}, c.UpdateStatus(ctx, &d)
}
