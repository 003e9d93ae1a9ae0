// bug: compares only the four counts with the stored status, so a spec change that leaves the counts alone never gets its observedGeneration written
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
	var replicas, updated, ready, available int32
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		replicas++
		if ctrl.PodImage(&p.Spec) == image {
			updated++
		}
		if ctrl.IsPodReady(&p) {
			ready++
			if ctrl.PodImage(&p.Spec) == image {
				available++
			}
		}
	}
	s := &d.Status
	if s.Replicas == replicas && s.UpdatedReplicas == updated && s.ReadyReplicas == ready && s.AvailableReplicas == available {
		return ctrl.Result{}, nil // the numbers already match
	}
	*s = ctrl.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas,
		UpdatedReplicas: updated, ReadyReplicas: ready, AvailableReplicas: available}
	return ctrl.Result{}, c.UpdateStatus(ctx, &d)
}
