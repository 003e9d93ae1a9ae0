// correct: switch-based classification with log lines and field-by-field diff logging
package main

import (
	"context"
	"strconv"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if !ctrl.IsNotFound(err) {
			ctrl.Log("get failed:", err.Error())
			return ctrl.Result{}, err
		}
		ctrl.Log("deployment", req.String(), "gone")
		return ctrl.Result{}, nil
	}
	if d.DeletionTimestamp != nil {
		ctrl.Log("deployment", req.String(), "being deleted")
		return ctrl.Result{}, nil
	}

	var pods ctrl.PodList
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		ctrl.Log("list failed:", err.Error())
		return ctrl.Result{}, err
	}

	tmpl := ctrl.PodImage(&d.Spec.Template.Spec)
	var replicas, updated, ready, available int32
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
			continue
		case p.Status.Phase == ctrl.PodFailed:
			continue
		}
		replicas++
		sameImage := ctrl.PodImage(&p.Spec) == tmpl
		isReady := ctrl.IsPodReady(&p)
		switch {
		case sameImage && isReady:
			updated++
			ready++
			available++
		case sameImage:
			updated++
		case isReady:
			ready++
		}
	}

	next := ctrl.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas,
		UpdatedReplicas:    updated,
		ReadyReplicas:      ready,
		AvailableReplicas:  available,
	}
	if next == d.Status {
		return ctrl.Result{}, nil
	}
	ctrl.Log("status", req.String(),
		"replicas", strconv.Itoa(int(replicas)),
		"updated", strconv.Itoa(int(updated)),
		"ready", strconv.Itoa(int(ready)),
		"available", strconv.Itoa(int(available)),
		"gen", strconv.FormatInt(d.Generation, 10))
	d.Status = next
	if err := c.UpdateStatus(ctx, &d); err != nil {
		if ctrl.IsConflict(err) {
			ctrl.Log("conflict, will retry")
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
