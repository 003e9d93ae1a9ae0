// bug: keeps writing the status of a Deployment that has a deletionTimestamp (rule 1 says return)
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
	var pods ctrl.PodList
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
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
	if st == d.Status {
		return ctrl.Result{}, nil
	}
	d.Status = st
	return ctrl.Result{}, c.UpdateStatus(ctx, &d)
}
