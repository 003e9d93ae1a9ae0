// bug: to fix an out-of-date Deployment it builds a fresh desired Deployment and updates with it (keeping only the resourceVersion), wiping the labels and annotations other tools put on the Deployment
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

func build(app *ctrl.App) *ctrl.Deployment {
	d := &ctrl.Deployment{
		ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
		Spec: ctrl.DeploymentSpec{
			Replicas: app.Spec.Replicas,
			Selector: ctrl.LabelSelector{MatchLabels: map[string]string{"app": app.Name}},
			Template: ctrl.PodTemplateSpec{
				ObjectMeta: ctrl.ObjectMeta{Labels: map[string]string{"app": app.Name}},
				Spec:       ctrl.PodSpec{Containers: []ctrl.Container{{Name: "server", Image: app.Spec.Image}}},
			},
		},
	}
	ctrl.SetControllerReference(app, d)
	return d
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var app ctrl.App
	if err := c.Get(ctx, req.NamespacedName, &app); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	want := build(&app)
	var have ctrl.Deployment
	if err := c.Get(ctx, ctrl.KeyOf(want), &have); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if err := c.Create(ctx, want); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.IsControlledBy(&have, &app) {
		if err := markReady(ctx, c, &app, false); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}

	if have.Spec.Replicas != want.Spec.Replicas || ctrl.PodImage(&have.Spec.Template.Spec) != app.Spec.Image {
		want.ResourceVersion = have.ResourceVersion
		want.UID = have.UID
		if err := c.Update(ctx, want); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	return ctrl.Result{}, markReady(ctx, c, &app, true)
}

func markReady(ctx context.Context, c ctrl.Client, app *ctrl.App, ok bool) error {
	cond := ctrl.Condition{Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
		Message: "Deployment is up to date", ObservedGeneration: app.Generation}
	if !ok {
		cond.Status, cond.Reason, cond.Message = ctrl.ConditionFalse, "ResourceExists", "a Deployment not controlled by this App holds the name"
	}
	changed := ctrl.SetCondition(&app.Status.Conditions, cond, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if !changed {
		return nil
	}
	return c.UpdateStatus(ctx, app)
}
