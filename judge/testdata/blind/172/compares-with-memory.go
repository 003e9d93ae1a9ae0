// bug: decides to write by comparing with its own last write kept in memory, not with the stored status; breaks "If the stored d.Status already equals it, return"
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

var lastWritten = map[string]ctrl.DeploymentStatus{}

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
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
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

	// Remember what we wrote last, so a stale cache does not make us write twice.
	key := req.String()
	if prev, ok := lastWritten[key]; ok && prev == st {
		return ctrl.Result{}, nil
	}
	d.Status = st
	if err := c.UpdateStatus(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	lastWritten[key] = st
	return ctrl.Result{}, nil
}
