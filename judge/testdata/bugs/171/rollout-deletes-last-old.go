// bug: during a rollout deletes the last old Pod by name instead of the first (rule 4.2)
package main

import (
	"context"
	"maps"

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
	var live []*ctrl.Pod
	var lastOld *ctrl.Pod
	available := int32(0)
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			return ctrl.Result{}, c.Delete(ctx, p)
		}
		live = append(live, p)
	}
	for _, p := range live {
		if ctrl.PodImage(&p.Spec) != image {
			lastOld = p // the most recent old one
		} else if ctrl.IsPodReady(p) {
			available++
		}
	}
	total := int32(len(live))
	r := d.Spec.Replicas
	s := d.Spec.Strategy.RollingUpdate

	if available < r-s.MaxUnavailable && total < r+s.MaxSurge {
		return ctrl.Result{}, spawn(ctx, c, &d)
	}
	if lastOld != nil && total >= r {
		return ctrl.Result{}, c.Delete(ctx, lastOld)
	}
	if total < r {
		return ctrl.Result{}, spawn(ctx, c, &d)
	}
	if total > r {
		if lastOld != nil {
			return ctrl.Result{}, c.Delete(ctx, lastOld)
		}
		return ctrl.Result{}, c.Delete(ctx, live[len(live)-1])
	}
	return ctrl.Result{}, nil
}

func spawn(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	pod := &ctrl.Pod{}
	pod.ObjectMeta = ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: maps.Clone(d.Spec.Template.Labels)}
	pod.Spec.Containers = append(pod.Spec.Containers, d.Spec.Template.Spec.Containers...)
	ctrl.SetControllerReference(d, pod)
	return c.Create(ctx, pod)
}
