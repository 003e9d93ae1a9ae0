// correct: filters the owned Pods into a slice with IsControlledBy as a double check, then counts in two passes
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func live(pods []ctrl.Pod, d *ctrl.Deployment) []*ctrl.Pod {
	out := make([]*ctrl.Pod, 0, len(pods))
	for i := range pods {
		p := &pods[i]
		if !ctrl.IsControlledBy(p, d) {
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var all ctrl.PodList
	if err := c.List(ctx, &all, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}
	pods := live(all.Items, &d)

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	var s ctrl.DeploymentStatus
	s.ObservedGeneration = d.Generation
	s.Replicas = int32(len(pods))
	for _, p := range pods {
		if ctrl.PodImage(&p.Spec) == image {
			s.UpdatedReplicas++
		}
	}
	for _, p := range pods {
		if ctrl.IsPodReady(p) {
			s.ReadyReplicas++
			if ctrl.PodImage(&p.Spec) == image {
				s.AvailableReplicas++
			}
		}
	}

	if d.Status != s {
		d.Status = s
		if err := c.UpdateStatus(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
