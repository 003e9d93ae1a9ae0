// correct: one indexed pass records first failed, first old and last live Pod, then closures for the two writes
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var dep ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &dep); ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if dep.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var pl ctrl.PodList
	if err := c.List(ctx, &pl, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&dep)); err != nil {
		return ctrl.Result{}, err
	}

	del := func(i int) (ctrl.Result, error) {
		if err := c.Delete(ctx, &pl.Items[i]); err != nil && !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	create := func() (ctrl.Result, error) {
		tmpl := dep.Spec.Template
		var labels map[string]string
		if tmpl.Labels != nil {
			labels = map[string]string{}
			for k, v := range tmpl.Labels {
				labels[k] = v
			}
		}
		spec := tmpl.Spec
		spec.Containers = append([]ctrl.Container(nil), tmpl.Spec.Containers...)
		pod := &ctrl.Pod{Spec: spec}
		pod.GenerateName = dep.Name + "-"
		pod.Namespace = dep.Namespace
		pod.Labels = labels
		ctrl.SetControllerReference(&dep, pod)
		return ctrl.Result{}, c.Create(ctx, pod)
	}

	image := ctrl.PodImage(&dep.Spec.Template.Spec)
	firstFailed, firstOld, last := -1, -1, -1
	var total, available int32
	for i := range pl.Items {
		p := &pl.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			if firstFailed < 0 {
				firstFailed = i
			}
			continue
		}
		total++
		last = i
		if ctrl.PodImage(&p.Spec) != image {
			if firstOld < 0 {
				firstOld = i
			}
		} else if ctrl.IsPodReady(p) {
			available++
		}
	}
	if firstFailed >= 0 {
		return del(firstFailed)
	}

	r := dep.Spec.Replicas
	maxSurge := dep.Spec.Strategy.RollingUpdate.MaxSurge
	maxUnavail := dep.Spec.Strategy.RollingUpdate.MaxUnavailable
	switch {
	case available < r-maxUnavail && total < r+maxSurge:
		return create()
	case firstOld >= 0 && total >= r:
		return del(firstOld)
	case total < r:
		return create()
	case total > r && firstOld >= 0:
		return del(firstOld)
	case total > r:
		return del(last)
	default:
		return ctrl.Result{}, nil
	}
}
