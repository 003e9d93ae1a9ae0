// correct: small helper functions for counting and for the Pod filter
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func counts(p *ctrl.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	return p.Status.Phase != ctrl.PodFailed
}

func desiredStatus(d *ctrl.Deployment, pods []ctrl.Pod) ctrl.DeploymentStatus {
	want := ctrl.PodImage(&d.Spec.Template.Spec)
	var s ctrl.DeploymentStatus
	for i := range pods {
		p := &pods[i]
		if !counts(p) {
			continue
		}
		s.Replicas++
		upToDate := ctrl.PodImage(&p.Spec) == want
		if upToDate {
			s.UpdatedReplicas++
		}
		if !ctrl.IsPodReady(p) {
			continue
		}
		s.ReadyReplicas++
		if upToDate {
			s.AvailableReplicas++
		}
	}
	s.ObservedGeneration = d.Generation
	return s
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{}
	err := c.Get(ctx, req.NamespacedName, d)
	switch {
	case ctrl.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	case d.DeletionTimestamp != nil:
		return ctrl.Result{}, nil
	}

	pods := &ctrl.PodList{}
	if err := c.List(ctx, pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(d)); err != nil {
		return ctrl.Result{}, err
	}

	want := desiredStatus(d, pods.Items)
	if want == d.Status {
		return ctrl.Result{}, nil
	}
	d.Status = want
	return ctrl.Result{}, c.UpdateStatus(ctx, d)
}
