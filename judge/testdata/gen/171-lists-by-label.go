// Bug: lists Pods by the selector's labels instead of by owner, so Pods it does not own count.
package main

import (
	"context"
	"maps"
	"slices"

	"ctrljudge/judge/ctrl"
)

// Reconcile moves one Deployment a single step closer to its spec. It
// decides from what it reads now, never from what it did before, so a
// restart, a repeated call or a lost event cannot lead it astray.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			// Deleted: the garbage collector removes its Pods.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var list ctrl.PodList
	if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace), ctrl.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return ctrl.Result{}, err
	}
	pods, failed := livePods(list.Items)

	// A failed Pod never recovers; clear it before anything else so the
	// replacement is counted against a true total.
	if len(failed) > 0 {
		return ctrl.Result{}, deletePod(ctx, c, &failed[0], "failed")
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	total := int32(len(pods))
	available := countAvailable(pods, image)
	old := oldPods(pods, image)
	r := d.Spec.Replicas
	surge := d.Spec.Strategy.RollingUpdate.MaxSurge
	unavail := d.Spec.Strategy.RollingUpdate.MaxUnavailable

	switch {
	case available < r-unavail && total < r+surge:
		// Too few serving Pods, and room to add one.
		return ctrl.Result{}, createPod(ctx, c, &d)
	case len(old) > 0 && total >= r:
		// Enough Pods exist (or too many): retire the oldest-named stale one.
		// This also covers total > r+surge, which implies total >= r.
		return ctrl.Result{}, deletePod(ctx, c, &old[0], "old")
	case total < r:
		return ctrl.Result{}, createPod(ctx, c, &d)
	case total > r:
		victim := &pods[len(pods)-1]
		if len(old) > 0 {
			victim = &old[0]
		}
		return ctrl.Result{}, deletePod(ctx, c, victim, "extra")
	}
	// Converged: no write, so a repeated call is harmless.
	return ctrl.Result{}, nil
}

// livePods splits the listed Pods (sorted by name) into those that count
// and those that failed, skipping Pods already on their way out.
func livePods(items []ctrl.Pod) (live, failed []ctrl.Pod) {
	for _, p := range items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == ctrl.PodFailed:
			failed = append(failed, p)
		default:
			live = append(live, p)
		}
	}
	return live, failed
}

// countAvailable counts Pods that serve the desired version: a Ready Pod on
// an old image does not bring the rollout any closer.
func countAvailable(pods []ctrl.Pod, image string) int32 {
	var n int32
	for i := range pods {
		if ctrl.IsPodReady(&pods[i]) && ctrl.PodImage(&pods[i].Spec) == image {
			n++
		}
	}
	return n
}

// oldPods returns the Pods on another image, still sorted by name.
func oldPods(pods []ctrl.Pod, image string) []ctrl.Pod {
	var old []ctrl.Pod
	for _, p := range pods {
		if ctrl.PodImage(&p.Spec) != image {
			old = append(old, p)
		}
	}
	return old
}

// createPod creates one Pod from the Deployment's template, owned by it so
// that List with OwnedBy finds it and the garbage collector removes it.
func createPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	spec := d.Spec.Template.Spec
	// Copy the slice: the template must not share memory with the new Pod.
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
	ctrl.Log("created", pod.Name, "with", ctrl.PodImage(&spec))
	return nil
}

// deletePod deletes p; a NotFound means someone else got there first, which
// is the outcome we wanted.
func deletePod(ctx context.Context, c ctrl.Client, p *ctrl.Pod, why string) error {
	if err := c.Delete(ctx, p); err != nil && !ctrl.IsNotFound(err) {
		return err
	}
	ctrl.Log("deleted", why, "Pod", p.Name)
	return nil
}
