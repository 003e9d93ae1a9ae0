//go:build ignore

package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

// Reconcile is called with a Deployment's key whenever the Deployment or
// one of its Pods changes. It should keep the Deployment's status true to
// its Pods, with two conditions, Available and Progressing, and write
// only when the stored status is wrong.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted: no status to keep
		}
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	var pods ctrl.PodList
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}

	now := ctrl.Now()
	want := counts(&d, pods.Items)
	r := d.Spec.Replicas

	if want.ReadyReplicas >= r-d.Spec.Strategy.RollingUpdate.MaxUnavailable {
		want.Available = condition(ctrl.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.", now)
	} else {
		want.Available = condition(ctrl.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", now)
	}

	old := d.Status.Progressing
	deadline := time.Duration(d.Spec.ProgressDeadlineSeconds) * time.Second
	switch {
	case want.Replicas == r && want.UpdatedReplicas == r && want.AvailableReplicas == r:
		want.Progressing = condition(ctrl.ConditionTrue, "NewReplicaSetAvailable", "Deployment "+d.Name+" has successfully progressed.", now)
	// BUG: how long has this rollout gone without progress? The
	// Deployment's age is not the answer.
	case deadline > 0 && !now.Before(d.CreationTimestamp.Add(deadline)):
		want.Progressing = condition(ctrl.ConditionFalse, "ProgressDeadlineExceeded", "Deployment "+d.Name+" has timed out progressing.", now)
	default:
		want.Progressing = condition(ctrl.ConditionTrue, "ReplicaSetUpdated", "Deployment "+d.Name+" is progressing.", now)
	}
	_ = old // the stored condition: what it said, and since when

	if d.Status != want {
		d.Status = want
		if err := c.UpdateStatus(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	// BUG: if the new Pods never become Ready, no event will come. Who
	// calls this Deployment again when its deadline passes?
	return ctrl.Result{}, nil
}

// condition makes a condition as of now.
// BUG: every call makes the timestamps afresh. When did the status last
// change, and when was progress last seen?
func condition(status ctrl.ConditionStatus, reason, msg string, now time.Time) ctrl.DeploymentCondition {
	return ctrl.DeploymentCondition{Status: status, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now}
}

// counts is 172's status: the Pods that stay, by image and readiness.
func counts(d *ctrl.Deployment, pods []ctrl.Pod) ctrl.DeploymentStatus {
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	st := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		current := ctrl.PodImage(&p.Spec) == image
		ready := ctrl.IsPodReady(p)
		st.Replicas++
		if current {
			st.UpdatedReplicas++
		}
		if ready {
			st.ReadyReplicas++
		}
		if ready && current {
			st.AvailableReplicas++
		}
	}
	return st
}
