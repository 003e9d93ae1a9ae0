// bug: asks to be called again after the whole deadline, not the time left, so a deadline after a quiet spell is noticed late
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

// Reconcile reports a Deployment's Pods in its status, with two
// conditions: Available and Progressing. It writes only when the status
// differs from the stored one, and while a rollout is under way with a
// deadline it asks to be called again when the deadline falls: a stuck
// rollout sends no events.
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
	want.Available = available(&d, want, now)
	want.Progressing = progressing(&d, want, now)

	if d.Status != want {
		d.Status = want
		// A Conflict means the Deployment changed since we read it:
		// return it, and the retry decides again from the newer one.
		if err := c.UpdateStatus(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: untilDeadline(&d, want.Progressing, now)}, nil
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

// available: enough Pods are Ready, whatever their image.
func available(d *ctrl.Deployment, st ctrl.DeploymentStatus, now time.Time) ctrl.DeploymentCondition {
	if st.ReadyReplicas >= d.Spec.Replicas-d.Spec.Strategy.RollingUpdate.MaxUnavailable {
		return setCondition(d.Status.Available, ctrl.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.", now)
	}
	return setCondition(d.Status.Available, ctrl.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", now)
}

// progressing follows the rules in order: complete stays complete for
// its generation; a complete rollout says so; progress moves
// lastUpdateTime; no progress past the deadline times out; otherwise
// nothing changes.
func progressing(d *ctrl.Deployment, st ctrl.DeploymentStatus, now time.Time) ctrl.DeploymentCondition {
	old := d.Status.Progressing
	r := d.Spec.Replicas
	switch {
	case old.Status == ctrl.ConditionTrue && old.Reason == "NewReplicaSetAvailable" && d.Status.ObservedGeneration == d.Generation:
		return old
	case st.Replicas == r && st.UpdatedReplicas == r && st.AvailableReplicas == r:
		return setCondition(old, ctrl.ConditionTrue, "NewReplicaSetAvailable", "Deployment "+d.Name+" has successfully progressed.", now)
	case progressed(d, st):
		c := ctrl.DeploymentCondition{Status: ctrl.ConditionTrue, Reason: "ReplicaSetUpdated",
			Message: "Deployment " + d.Name + " is progressing.", LastUpdateTime: now, LastTransitionTime: now}
		if old.Status == ctrl.ConditionTrue {
			c.LastTransitionTime = old.LastTransitionTime
		}
		return c
	case d.Spec.ProgressDeadlineSeconds > 0 && old.Status == ctrl.ConditionTrue &&
		!now.Before(old.LastUpdateTime.Add(deadline(d))):
		return ctrl.DeploymentCondition{Status: ctrl.ConditionFalse, Reason: "ProgressDeadlineExceeded",
			Message: "Deployment " + d.Name + " has timed out progressing.", LastUpdateTime: old.LastUpdateTime, LastTransitionTime: now}
	}
	return old
}

// progressed compares the counts with the stored status: a first report,
// a new generation, or a count that moved the rollout's way.
func progressed(d *ctrl.Deployment, st ctrl.DeploymentStatus) bool {
	old := d.Status
	return old.Progressing.Status == "" || old.ObservedGeneration != d.Generation ||
		st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// setCondition keeps a condition that already says status for reason;
// otherwise it is rewritten now, keeping lastTransitionTime if the
// status stays.
func setCondition(old ctrl.DeploymentCondition, status ctrl.ConditionStatus, reason, msg string, now time.Time) ctrl.DeploymentCondition {
	if old.Status == status && old.Reason == reason {
		return old
	}
	c := ctrl.DeploymentCondition{Status: status, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now}
	if old.Status == status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

func deadline(d *ctrl.Deployment) time.Duration {
	return time.Duration(d.Spec.ProgressDeadlineSeconds) * time.Second
}

// untilDeadline is how long until a rollout under way times out: nothing
// else will call us if its Pods are stuck. Zero (no requeue) when there
// is no deadline or nothing to wait for.
func untilDeadline(d *ctrl.Deployment, p ctrl.DeploymentCondition, now time.Time) time.Duration {
	if d.Spec.ProgressDeadlineSeconds <= 0 || p.Status != ctrl.ConditionTrue || p.Reason == "NewReplicaSetAvailable" {
		return 0
	}
	return deadline(d)
}
