// bug: Failed Pods still counted; breaks "a Pod in phase Failed ... neither counts in any field"
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
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		st.Replicas++
		updated := ctrl.PodImage(&p.Spec) == image
		ready := ctrl.IsPodReady(p)
		if updated {
			st.UpdatedReplicas++
		}
		if ready {
			st.ReadyReplicas++
		}
		if ready && updated {
			st.AvailableReplicas++
		}
	}

	if d.Status == st {
		return ctrl.Result{}, nil
	}
	d.Status = st
	if err := c.UpdateStatus(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
