// bug: lists Pods by the selector's labels instead of by owner, so it counts and deletes Pods that belong to someone else
package main

import (
	"context"
	"maps"
	"slices"

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

	// The selector says which Pods are ours.
	var list ctrl.PodList
	if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace), ctrl.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return ctrl.Result{}, err
	}

	var pods, failed []ctrl.Pod
	for _, p := range list.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == ctrl.PodFailed:
			failed = append(failed, p)
		default:
			pods = append(pods, p)
		}
	}
	if len(failed) > 0 {
		return ctrl.Result{}, c.Delete(ctx, &failed[0])
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	var old []ctrl.Pod
	var available int32
	for _, p := range pods {
		if ctrl.PodImage(&p.Spec) != image {
			old = append(old, p)
		} else if ctrl.IsPodReady(&p) {
			available++
		}
	}
	total := int32(len(pods))
	r := d.Spec.Replicas
	surge, unavail := d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable

	switch {
	case available < r-unavail && total < r+surge:
		return ctrl.Result{}, createPod(ctx, c, &d)
	case len(old) > 0 && total >= r:
		return ctrl.Result{}, c.Delete(ctx, &old[0])
	case total < r:
		return ctrl.Result{}, createPod(ctx, c, &d)
	case total > r:
		if len(old) > 0 {
			return ctrl.Result{}, c.Delete(ctx, &old[0])
		}
		return ctrl.Result{}, c.Delete(ctx, &pods[len(pods)-1])
	}
	return ctrl.Result{}, nil
}

func createPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	spec := d.Spec.Template.Spec
	spec.Containers = slices.Clone(spec.Containers)
	pod := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: maps.Clone(d.Spec.Template.Labels)}, Spec: spec}
	ctrl.SetControllerReference(d, pod)
	return c.Create(ctx, pod)
}
