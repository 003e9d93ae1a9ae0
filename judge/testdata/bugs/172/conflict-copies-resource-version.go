// bug: on a Conflict, copies the fresh resourceVersion onto the status it computed from the old read and writes again, overwriting the newer Deployment's state
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
	err := c.UpdateStatus(ctx, &d)
	if ctrl.IsConflict(err) {
		// Someone bumped the version under us: take theirs and push ours.
		var fresh ctrl.Deployment
		if gerr := c.Get(ctx, req.NamespacedName, &fresh); gerr != nil {
			return ctrl.Result{}, gerr
		}
		d.ResourceVersion = fresh.ResourceVersion
		err = c.UpdateStatus(ctx, &d)
	}
	return ctrl.Result{}, err
}
