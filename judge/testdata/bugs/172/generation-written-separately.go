// bug: writes the counts and then observedGeneration in a second UpdateStatus: two writes where one is needed, and a reader sees counts claimed for the old generation in between
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
	counts := d.Status
	counts.Replicas, counts.UpdatedReplicas, counts.ReadyReplicas, counts.AvailableReplicas = 0, 0, 0, 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		counts.Replicas++
		upd := ctrl.PodImage(&p.Spec) == image
		if upd {
			counts.UpdatedReplicas++
		}
		if ctrl.IsPodReady(&p) {
			counts.ReadyReplicas++
			if upd {
				counts.AvailableReplicas++
			}
		}
	}
	// First the numbers...
	if counts != d.Status {
		d.Status = counts
		if err := c.UpdateStatus(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	// ...then the generation they describe.
	if d.Status.ObservedGeneration != d.Generation {
		d.Status.ObservedGeneration = d.Generation
		if err := c.UpdateStatus(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
