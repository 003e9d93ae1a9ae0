// bug: never checks the Deployment's deletionTimestamp, so it keeps creating Pods for a Deployment being deleted (rule 1 says return)
package main

import (
	"context"
	"maps"
	"slices"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var dep ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &dep); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	var all ctrl.PodList
	if err := c.List(ctx, &all, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&dep)); err != nil {
		return ctrl.Result{}, err
	}
	var live []ctrl.Pod
	for _, p := range all.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			if err := c.Delete(ctx, &p); err != nil && !ctrl.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			return ctrl.Result{}, nil
		}
		live = append(live, p)
	}

	want := ctrl.PodImage(&dep.Spec.Template.Spec)
	isOld := func(p ctrl.Pod) bool { return ctrl.PodImage(&p.Spec) != want }
	total := int32(len(live))
	var available int32
	for _, p := range live {
		if !isOld(p) && ctrl.IsPodReady(&p) {
			available++
		}
	}
	oldIdx := slices.IndexFunc(live, isOld)
	r := dep.Spec.Replicas
	ru := dep.Spec.Strategy.RollingUpdate

	if available < r-ru.MaxUnavailable && total < r+ru.MaxSurge {
		return ctrl.Result{}, makePod(ctx, c, &dep)
	}
	if oldIdx >= 0 && total >= r {
		return ctrl.Result{}, c.Delete(ctx, &live[oldIdx])
	}
	if total < r {
		return ctrl.Result{}, makePod(ctx, c, &dep)
	}
	if total > r {
		if oldIdx < 0 {
			oldIdx = len(live) - 1
		}
		return ctrl.Result{}, c.Delete(ctx, &live[oldIdx])
	}
	return ctrl.Result{}, nil
}

func makePod(ctx context.Context, c ctrl.Client, dep *ctrl.Deployment) error {
	p := &ctrl.Pod{}
	p.GenerateName = dep.Name + "-"
	p.Namespace = dep.Namespace
	p.Labels = maps.Clone(dep.Spec.Template.Labels)
	p.Spec.Containers = slices.Clone(dep.Spec.Template.Spec.Containers)
	ctrl.SetControllerReference(dep, p)
	return c.Create(ctx, p)
}
