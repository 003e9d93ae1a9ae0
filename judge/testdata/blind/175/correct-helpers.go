// correct: splits the work into helpers (desired Deployment, drift check, a status helper shared by rules 4 and 6) and compares against a freshly built desired object
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

const requeueBlocked = 30 * time.Second

func desiredDeployment(app *ctrl.App) *ctrl.Deployment {
	sel := func() map[string]string { return map[string]string{"app": app.Name} }
	d := &ctrl.Deployment{}
	d.Name = app.Name
	d.Namespace = app.Namespace
	d.Spec.Replicas = app.Spec.Replicas
	d.Spec.Selector.MatchLabels = sel()
	d.Spec.Template.Labels = sel()
	d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
	ctrl.SetControllerReference(app, d)
	return d
}

func drifted(have, want *ctrl.Deployment) bool {
	if have.Spec.Replicas != want.Spec.Replicas {
		return true
	}
	return ctrl.PodImage(&have.Spec.Template.Spec) != ctrl.PodImage(&want.Spec.Template.Spec)
}

// setReady records the Ready condition and writes the status if it differs.
func setReady(ctx context.Context, c ctrl.Client, app *ctrl.App, ok bool, reason, msg string) error {
	st := ctrl.ConditionFalse
	if ok {
		st = ctrl.ConditionTrue
	}
	dirty := app.Status.ObservedGeneration != app.Generation
	app.Status.ObservedGeneration = app.Generation
	if ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type: "Ready", Status: st, Reason: reason, Message: msg, ObservedGeneration: app.Generation,
	}, ctrl.Now()) {
		dirty = true
	}
	if !dirty {
		return nil
	}
	return c.UpdateStatus(ctx, app)
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	app := &ctrl.App{}
	if err := c.Get(ctx, req.NamespacedName, app); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		ctrl.Log("app", req.String(), "is being deleted")
		return ctrl.Result{}, nil
	}

	want := desiredDeployment(app)
	have := &ctrl.Deployment{}
	if err := c.Get(ctx, ctrl.KeyOf(want), have); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if err := c.Create(ctx, want); err != nil {
			if ctrl.IsAlreadyExists(err) {
				ctrl.Log("name", req.String(), "taken, looking again later")
				return ctrl.Result{RequeueAfter: requeueBlocked}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.IsControlledBy(have, app) {
		if err := setReady(ctx, c, app, false, "ResourceExists", "Deployment "+app.Name+" exists and is not controlled by this App"); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: requeueBlocked}, nil
	}

	if drifted(have, want) {
		have.Spec.Replicas = want.Spec.Replicas
		if len(have.Spec.Template.Spec.Containers) > 0 {
			have.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		} else {
			have.Spec.Template.Spec.Containers = want.Spec.Template.Spec.Containers
		}
		return ctrl.Result{}, c.Update(ctx, have)
	}

	return ctrl.Result{}, setReady(ctx, c, app, true, "DeploymentUpToDate", "Deployment "+app.Name+" is up to date")
}
