// correct: decides with a pure function that returns one action, then performs it
package main

import (
	"context"
	"maps"

	"ctrljudge/judge/ctrl"
)

type action struct {
	create bool
	victim *ctrl.Pod
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	err := c.Get(ctx, req.NamespacedName, &d)
	if ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	var list ctrl.PodList
	if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}
	a := decide(&d, list.Items)
	switch {
	case a.create:
		pod := &ctrl.Pod{}
		pod.GenerateName = d.Name + "-"
		pod.Namespace = d.Namespace
		pod.Labels = maps.Clone(d.Spec.Template.Labels)
		pod.Spec.NodeName = d.Spec.Template.Spec.NodeName
		pod.Spec.Containers = append([]ctrl.Container(nil), d.Spec.Template.Spec.Containers...)
		ctrl.SetControllerReference(&d, pod)
		return ctrl.Result{}, c.Create(ctx, pod)
	case a.victim != nil:
		err := c.Delete(ctx, a.victim)
		if ctrl.IsNotFound(err) {
			err = nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// decide applies the statement's rules to what was read, in order.
func decide(d *ctrl.Deployment, items []ctrl.Pod) action {
	var live []*ctrl.Pod
	for i := range items {
		p := &items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			return action{victim: p}
		}
		live = append(live, p)
	}
	want := ctrl.PodImage(&d.Spec.Template.Spec)
	var firstOld *ctrl.Pod
	available := 0
	for _, p := range live {
		if ctrl.PodImage(&p.Spec) != want {
			if firstOld == nil {
				firstOld = p
			}
			continue
		}
		if ctrl.IsPodReady(p) {
			available++
		}
	}
	r := int(d.Spec.Replicas)
	ru := d.Spec.Strategy.RollingUpdate
	total := len(live)
	if available < r-int(ru.MaxUnavailable) && total < r+int(ru.MaxSurge) {
		return action{create: true}
	}
	if firstOld != nil && total >= r {
		return action{victim: firstOld}
	}
	if total < r {
		return action{create: true}
	}
	if total > r {
		if firstOld != nil {
			return action{victim: firstOld}
		}
		return action{victim: live[total-1]}
	}
	return action{}
}
