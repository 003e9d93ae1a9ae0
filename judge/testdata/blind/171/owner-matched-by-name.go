// bug: selects Pods whose controller reference has the Deployment's name, not its UID (rule 2: list the Pods it owns; re-created Deployments get a new UID)
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
	if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace)); err != nil {
		return ctrl.Result{}, err
	}

	var pods []ctrl.Pod
	for _, p := range list.Items {
		ref := ctrl.GetControllerOf(&p)
		if ref == nil || ref.Kind != "Deployment" || ref.Name != d.Name {
			continue
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == ctrl.PodFailed {
			// the list is sorted by name, so this is the first failed Pod
			return ctrl.Result{}, deletePod(ctx, c, &p)
		}
		pods = append(pods, p)
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	total := int32(len(pods))
	var available int32
	var old []int
	for i := range pods {
		img := ctrl.PodImage(&pods[i].Spec)
		if img != image {
			old = append(old, i)
			continue
		}
		if ctrl.IsPodReady(&pods[i]) {
			available++
		}
	}
	r := d.Spec.Replicas
	surge := d.Spec.Strategy.RollingUpdate.MaxSurge
	unavail := d.Spec.Strategy.RollingUpdate.MaxUnavailable

	switch {
	case available < r-unavail && total < r+surge:
		return ctrl.Result{}, createPod(ctx, c, &d)
	case len(old) > 0 && total >= r:
		return ctrl.Result{}, deletePod(ctx, c, &pods[old[0]])
	case total < r:
		return ctrl.Result{}, createPod(ctx, c, &d)
	case total > r:
		victim := &pods[len(pods)-1]
		if len(old) > 0 {
			victim = &pods[old[0]]
		}
		return ctrl.Result{}, deletePod(ctx, c, victim)
	}
	return ctrl.Result{}, nil
}

func deletePod(ctx context.Context, c ctrl.Client, p *ctrl.Pod) error {
	if err := c.Delete(ctx, p); err != nil && !ctrl.IsNotFound(err) {
		return err
	}
	return nil
}

func createPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	spec := d.Spec.Template.Spec
	spec.Containers = slices.Clone(spec.Containers)
	pod := &ctrl.Pod{
		ObjectMeta: ctrl.ObjectMeta{
			GenerateName: d.Name + "-",
			Namespace:    d.Namespace,
			Labels:       maps.Clone(d.Spec.Template.Labels),
		},
		Spec: spec,
	}
	ctrl.SetControllerReference(d, pod)
	return c.Create(ctx, pod)
}
