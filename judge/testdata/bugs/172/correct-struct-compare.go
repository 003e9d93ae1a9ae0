// correct: builds the status in one literal-style pass and compares field by field before UpdateStatus
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var dep ctrl.Deployment
	switch err := c.Get(ctx, req.NamespacedName, &dep); {
	case ctrl.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	if dep.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	var pods ctrl.PodList
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&dep)); err != nil {
		return ctrl.Result{}, err
	}

	image := ctrl.PodImage(&dep.Spec.Template.Spec)
	var replicas, updated, ready, available int32
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		replicas++
		isUpdated := ctrl.PodImage(&p.Spec) == image
		isReady := ctrl.IsPodReady(&p)
		if isUpdated {
			updated++
		}
		if isReady {
			ready++
			if isUpdated {
				available++
			}
		}
	}
	old := dep.Status
	if old.Replicas == replicas && old.UpdatedReplicas == updated && old.ReadyReplicas == ready &&
		old.AvailableReplicas == available && old.ObservedGeneration == dep.Generation {
		return ctrl.Result{}, nil
	}
	dep.Status.Replicas = replicas
	dep.Status.UpdatedReplicas = updated
	dep.Status.ReadyReplicas = ready
	dep.Status.AvailableReplicas = available
	dep.Status.ObservedGeneration = dep.Generation
	err := c.UpdateStatus(ctx, &dep)
	if ctrl.IsConflict(err) {
		ctrl.Log("conflict on", dep.Name, "- retrying from a fresh read")
	}
	return ctrl.Result{}, err
}
