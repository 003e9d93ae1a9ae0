// bug: counts a Running Pod on the desired image as available without looking at its Ready condition
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
	var list ctrl.PodList
	if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	var total, available int32
	var old, current []ctrl.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			return ctrl.Result{}, c.Delete(ctx, &p)
		}
		total++
		if ctrl.PodImage(&p.Spec) != image {
			old = append(old, p)
			continue
		}
		current = append(current, p)
		if p.Status.Phase == ctrl.PodRunning {
			available++
		}
	}

	r := d.Spec.Replicas
	rolling := d.Spec.Strategy.RollingUpdate
	if available < r-rolling.MaxUnavailable && total < r+rolling.MaxSurge {
		return ctrl.Result{}, addPod(ctx, c, &d)
	}
	if len(old) > 0 && total >= r {
		return ctrl.Result{}, c.Delete(ctx, &old[0])
	}
	if total < r {
		return ctrl.Result{}, addPod(ctx, c, &d)
	}
	if total > r {
		if len(old) > 0 {
			return ctrl.Result{}, c.Delete(ctx, &old[0])
		}
		return ctrl.Result{}, c.Delete(ctx, &current[len(current)-1])
	}
	return ctrl.Result{}, nil
}

func addPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	p := &ctrl.Pod{
		ObjectMeta: ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: maps.Clone(d.Spec.Template.Labels)},
		Spec:       ctrl.PodSpec{Containers: slices.Clone(d.Spec.Template.Spec.Containers)},
	}
	ctrl.SetControllerReference(d, p)
	return c.Create(ctx, p)
}
