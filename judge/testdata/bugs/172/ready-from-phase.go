// bug: takes a Running Pod as Ready, reading the phase instead of the Ready condition
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
	var st ctrl.DeploymentStatus
	st.ObservedGeneration = d.Generation
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		switch p.Status.Phase {
		case ctrl.PodFailed:
			continue
		case ctrl.PodRunning:
			st.ReadyReplicas++
			if ctrl.PodImage(&p.Spec) == image {
				st.AvailableReplicas++
			}
		}
		st.Replicas++
		if ctrl.PodImage(&p.Spec) == image {
			st.UpdatedReplicas++
		}
	}
	if d.Status == st {
		return ctrl.Result{}, nil
	}
	d.Status = st
	return ctrl.Result{}, c.UpdateStatus(ctx, &d)
}
