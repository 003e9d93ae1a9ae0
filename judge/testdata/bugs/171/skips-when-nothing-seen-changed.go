// bug: skips a call when the Deployment's generation and its number of live Pods are what it saw last time, so it misses Pods that become unready or fail over a lost write
package main

import (
	"context"
	"maps"
	"slices"

	"ctrljudge/judge/ctrl"
)

type seen struct {
	generation int64
	pods       int
}

// last remembers, per Deployment, what the previous call looked at, to
// save work on the many calls that change nothing.
var last = map[string]seen{}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			delete(last, req.String())
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
	now := seen{d.Generation, len(pods)}
	if last[req.String()] == now && len(failed) == 0 {
		return ctrl.Result{}, nil
	}
	last[req.String()] = now

	if len(failed) > 0 {
		return ctrl.Result{}, c.Delete(ctx, &failed[0])
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
	case available < r-unavail && total < r+surge:
		return ctrl.Result{}, create(ctx, c, &d)
	case len(old) > 0 && total >= r:
		return ctrl.Result{}, c.Delete(ctx, &old[0])
	case total < r:
		return ctrl.Result{}, create(ctx, c, &d)
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
