// bug: returns a made-up error after each successful create "to be called again", though nothing failed (rule 5: the error of a failed write, or nil)
package main

import (
	"context"
	"errors"
	"maps"
	"slices"

	"ctrljudge/judge/ctrl"
)

var errNotDone = errors.New("pod created, not converged yet")

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
	var pods []ctrl.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			return ctrl.Result{}, c.Delete(ctx, &p)
		}
		pods = append(pods, p)
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	var available int32
	var old []ctrl.Pod
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
	case available < r-unavail && total < r+surge, total < r:
		if err := create(ctx, c, &d); err != nil {
			return ctrl.Result{}, err
		}
		// Come back soon to check the new Pod.
		return ctrl.Result{}, errNotDone
	case len(old) > 0 && total >= r:
		return ctrl.Result{}, c.Delete(ctx, &old[0])
	case total > r:
		if len(old) > 0 {
			return ctrl.Result{}, c.Delete(ctx, &old[0])
		}
		return ctrl.Result{}, c.Delete(ctx, &pods[len(pods)-1])
	}
	return ctrl.Result{}, nil
}

func create(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: maps.Clone(d.Spec.Template.Labels)},
		Spec: ctrl.PodSpec{Containers: slices.Clone(d.Spec.Template.Spec.Containers)}}
	ctrl.SetControllerReference(d, p)
	return c.Create(ctx, p)
}
