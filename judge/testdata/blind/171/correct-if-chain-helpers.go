// correct: small counting helpers and an if-chain, failed Pod found with slices.IndexFunc
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
	pods := slices.DeleteFunc(slices.Clone(list.Items), func(p ctrl.Pod) bool {
		return p.DeletionTimestamp != nil
	})

	if i := slices.IndexFunc(pods, isFailed); i >= 0 {
		return ctrl.Result{}, remove(ctx, c, &pods[i])
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	total := int32(len(pods))
	available := countAvailable(pods, image)
	firstOld := slices.IndexFunc(pods, func(p ctrl.Pod) bool { return ctrl.PodImage(&p.Spec) != image })
	r := d.Spec.Replicas
	surge := d.Spec.Strategy.RollingUpdate.MaxSurge
	unavail := d.Spec.Strategy.RollingUpdate.MaxUnavailable

	if available < r-unavail && total < r+surge {
		return ctrl.Result{}, add(ctx, c, &d)
	}
	if firstOld >= 0 && total >= r {
		return ctrl.Result{}, remove(ctx, c, &pods[firstOld])
	}
	if total < r {
		return ctrl.Result{}, add(ctx, c, &d)
	}
	if total > r {
		victim := len(pods) - 1
		if firstOld >= 0 {
			victim = firstOld
		}
		return ctrl.Result{}, remove(ctx, c, &pods[victim])
	}
	return ctrl.Result{}, nil
}

func isFailed(p ctrl.Pod) bool { return p.Status.Phase == ctrl.PodFailed }

func countAvailable(pods []ctrl.Pod, image string) int32 {
	var n int32
	for i := range pods {
		if ctrl.IsPodReady(&pods[i]) && ctrl.PodImage(&pods[i].Spec) == image {
			n++
		}
	}
	return n
}

func remove(ctx context.Context, c ctrl.Client, p *ctrl.Pod) error {
	err := c.Delete(ctx, p)
	if err != nil && ctrl.IsNotFound(err) {
		err = nil
	}
	return err
}

func add(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	pod := ctrl.Pod{
		ObjectMeta: ctrl.ObjectMeta{
			GenerateName: d.Name + "-",
			Namespace:    d.Namespace,
			Labels:       maps.Clone(d.Spec.Template.Labels),
		},
		Spec: ctrl.PodSpec{
			Containers: slices.Clone(d.Spec.Template.Spec.Containers),
			NodeName:   d.Spec.Template.Spec.NodeName,
		},
	}
	ctrl.SetControllerReference(d, &pod)
	return c.Create(ctx, &pod)
}
