// bug: any error from the Get is taken to mean the Deployment is gone
package main

import (
	"context"
	"strconv"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{}
	if err := c.Get(ctx, req.NamespacedName, d); err != nil {
		// not there any more: nothing to do
		return ctrl.Result{}, nil
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	pods := &ctrl.PodList{}
	if err := c.List(ctx, pods, ctrl.InNamespace(d.Namespace), ctrl.OwnedBy(d)); err != nil {
		return ctrl.Result{}, err
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	var total, available int32
	firstOld, last := -1, -1
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			ctrl.Log("removing failed pod", p.Name)
			return ctrl.Result{}, ignoreNotFound(c.Delete(ctx, p))
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

	replicas := d.Spec.Replicas
	maxSurge := d.Spec.Strategy.RollingUpdate.MaxSurge
	maxUnavailable := d.Spec.Strategy.RollingUpdate.MaxUnavailable
	ctrl.Log(d.Name, "total", strconv.Itoa(int(total)), "available", strconv.Itoa(int(available)))

	if available < replicas-maxUnavailable && total < replicas+maxSurge {
		return ctrl.Result{}, newPod(ctx, c, d)
	}
	if firstOld >= 0 && total >= replicas {
		return ctrl.Result{}, ignoreNotFound(c.Delete(ctx, &pods.Items[firstOld]))
	}
	if total < replicas {
		return ctrl.Result{}, newPod(ctx, c, d)
	}
	if total > replicas {
		victim := last
		if firstOld >= 0 {
			victim = firstOld
		}
		return ctrl.Result{}, ignoreNotFound(c.Delete(ctx, &pods.Items[victim]))
	}
	return ctrl.Result{}, nil
}

func ignoreNotFound(err error) error {
	if ctrl.IsNotFound(err) {
		return nil
	}
	return err
}

func newPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	labels := make(map[string]string, len(d.Spec.Template.Labels))
	for k, v := range d.Spec.Template.Labels {
		labels[k] = v
	}
	containers := make([]ctrl.Container, len(d.Spec.Template.Spec.Containers))
	copy(containers, d.Spec.Template.Spec.Containers)
	p := &ctrl.Pod{
		ObjectMeta: ctrl.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: labels},
		Spec:       ctrl.PodSpec{Containers: containers, NodeName: d.Spec.Template.Spec.NodeName},
	}
	ctrl.SetControllerReference(d, p)
	return c.Create(ctx, p)
}
