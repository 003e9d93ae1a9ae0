// correct: decides each condition in a function of its own, with its own messages, and computes the timer from the condition it stored
package main

import (
	"context"
	"strconv"
	"time"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := new(ctrl.Deployment)
	if err := c.Get(ctx, req.NamespacedName, d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	list := new(ctrl.PodList)
	if err := c.List(ctx, list, ctrl.InNamespace(d.Namespace), ctrl.OwnedBy(d)); err != nil {
		return ctrl.Result{}, err
	}
	now := ctrl.Now()
	old := d.Status
	next := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	img := ctrl.PodImage(&d.Spec.Template.Spec)
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == ctrl.PodFailed {
			continue
		}
		next.Replicas++
		onImage := ctrl.PodImage(&p.Spec) == img
		if onImage {
			next.UpdatedReplicas++
		}
		if ctrl.IsPodReady(&p) {
			next.ReadyReplicas++
			if onImage {
				next.AvailableReplicas++
			}
		}
	}
	next.Available = availability(d, old.Available, next.ReadyReplicas, now)
	next.Progressing = progress(d, old, next, now)
	if next != old {
		d.Status = next
		if err := c.UpdateStatus(ctx, d); err != nil {
			return ctrl.Result{}, err
		}
		ctrl.Log("status of", d.Name, "written at", now.Format(time.RFC3339))
	}
	p := next.Progressing
	if d.Spec.ProgressDeadlineSeconds > 0 && p.Status == ctrl.ConditionTrue && p.Reason != "NewReplicaSetAvailable" {
		left := p.LastUpdateTime.Add(time.Duration(d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
		return ctrl.Result{RequeueAfter: left}, nil
	}
	return ctrl.Result{}, nil
}

func availability(d *ctrl.Deployment, old ctrl.DeploymentCondition, ready int32, now time.Time) ctrl.DeploymentCondition {
	need := d.Spec.Replicas - d.Spec.Strategy.RollingUpdate.MaxUnavailable
	c := ctrl.DeploymentCondition{Status: ctrl.ConditionFalse, Reason: "MinimumReplicasUnavailable",
		Message: "fewer than " + strconv.Itoa(int(need)) + " Pods are Ready"}
	if ready >= need {
		c = ctrl.DeploymentCondition{Status: ctrl.ConditionTrue, Reason: "MinimumReplicasAvailable",
			Message: "at least " + strconv.Itoa(int(need)) + " Pods are Ready"}
	}
	return stamp(old, c, now)
}

// stamp keeps old if it says the same; otherwise c is new as of now.
func stamp(old, c ctrl.DeploymentCondition, now time.Time) ctrl.DeploymentCondition {
	if old.Status == c.Status && old.Reason == c.Reason {
		return old
	}
	c.LastUpdateTime, c.LastTransitionTime = now, now
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

func progress(d *ctrl.Deployment, old, next ctrl.DeploymentStatus, now time.Time) ctrl.DeploymentCondition {
	cur := old.Progressing
	sameGen := old.ObservedGeneration == d.Generation
	if cur.Status == ctrl.ConditionTrue && cur.Reason == "NewReplicaSetAvailable" && sameGen {
		return cur
	}
	r := d.Spec.Replicas
	if next.Replicas == r && next.UpdatedReplicas == r && next.AvailableReplicas == r {
		return stamp(cur, ctrl.DeploymentCondition{Status: ctrl.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: "rollout complete"}, now)
	}
	moved := cur.Status == "" || !sameGen || next.UpdatedReplicas > old.UpdatedReplicas ||
		next.Replicas-next.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		next.ReadyReplicas > old.ReadyReplicas || next.AvailableReplicas > old.AvailableReplicas
	if moved {
		c := ctrl.DeploymentCondition{Status: ctrl.ConditionTrue, Reason: "ReplicaSetUpdated", Message: "rollout in progress",
			LastUpdateTime: now, LastTransitionTime: now}
		if cur.Status == ctrl.ConditionTrue {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		return c
	}
	deadline := time.Duration(d.Spec.ProgressDeadlineSeconds) * time.Second
	if deadline > 0 && cur.Status == ctrl.ConditionTrue && !now.Before(cur.LastUpdateTime.Add(deadline)) {
		return ctrl.DeploymentCondition{Status: ctrl.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "no progress before the deadline",
			LastUpdateTime: cur.LastUpdateTime, LastTransitionTime: now}
	}
	return cur
}
