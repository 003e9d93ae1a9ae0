//go:build ignore

package main

import (
	"context"
	"maps"
	"slices"

	"ctrljudge/judge/ctrl"
)

// created counts the Pods this controller has made, per Deployment.
//
// BUG: this number lives only in the controller's memory. Who else can add
// or remove Pods, and what is left of the map after a restart?
var created = map[string]int32{}

// Reconcile is called with a Deployment's key whenever the Deployment or
// one of its Pods changes. It should take at most one step per call.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted; its Pods go with it
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

	key := req.String()
	if len(failed) > 0 {
		if err := c.Delete(ctx, &failed[0]); err != nil {
			return ctrl.Result{}, err
		}
		created[key]--
		return ctrl.Result{}, nil
	}

	// BUG: the count comes from memory, not from the Pods just listed.
	total := created[key]
	// BUG: is every Ready Pod really serving what the Deployment asks for?
	var available int32
	for i := range pods {
		if ctrl.IsPodReady(&pods[i]) {
			available++
		}
	}
	r := d.Spec.Replicas
	surge := d.Spec.Strategy.RollingUpdate.MaxSurge
	unavail := d.Spec.Strategy.RollingUpdate.MaxUnavailable

	switch {
	case available < r-unavail && total < r+surge:
		return ctrl.Result{}, create(ctx, c, &d)
	// BUG: when the template's image changes, which rule replaces the Pods
	// still running the old one?
	case total < r:
		return ctrl.Result{}, create(ctx, c, &d)
	case total > r && len(pods) > 0:
		if err := c.Delete(ctx, &pods[len(pods)-1]); err != nil {
			return ctrl.Result{}, err
		}
		created[key]--
	}
	return ctrl.Result{}, nil
}

// create makes one Pod from the Deployment's template.
func create(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
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
	if err := c.Create(ctx, pod); err != nil {
		return err
	}
	created[ctrl.KeyOf(d).String()]++
	return nil
}
