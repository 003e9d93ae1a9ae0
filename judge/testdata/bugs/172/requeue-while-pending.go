// bug: asks for RequeueAfter while some Pods are not Ready yet, though every Pod change already brings the controller back (rule 4: an empty Result)
package main

import (
	"context"
	"time"

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
	// Pods still starting: look again shortly.
	var res ctrl.Result
	if st.ReadyReplicas < st.Replicas {
		res.RequeueAfter = time.Second
	}
	if st == d.Status {
		return res, nil
	}
	d.Status = st
	return res, c.UpdateStatus(ctx, &d)
}
