// bug: gives new Pods the selector's matchLabels instead of a copy of the template's labels
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
	var pods, failed []ctrl.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			failed = append(failed, p)
		} else {
			pods = append(pods, p)
		}
	}
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
	ru := d.Spec.Strategy.RollingUpdate
	switch {
	case available < r-ru.MaxUnavailable && total < r+ru.MaxSurge:
		return ctrl.Result{}, newPod(ctx, c, &d)
	case len(old) > 0 && total >= r:
		return ctrl.Result{}, c.Delete(ctx, &old[0])
	case total < r:
		return ctrl.Result{}, newPod(ctx, c, &d)
	case total > r:
		if len(old) > 0 {
			return ctrl.Result{}, c.Delete(ctx, &old[0])
		}
		return ctrl.Result{}, c.Delete(ctx, &pods[len(pods)-1])
	}
	return ctrl.Result{}, nil
}

func newPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	p := &ctrl.Pod{
		// The selector is what finds our Pods, so they need its labels.
		ObjectMeta: ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: maps.Clone(d.Spec.Selector.MatchLabels)},
		Spec:       ctrl.PodSpec{Containers: slices.Clone(d.Spec.Template.Spec.Containers)},
	}
	ctrl.SetControllerReference(d, p)
	return c.Create(ctx, p)
}
