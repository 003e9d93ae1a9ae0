// bug: upserts the Ready condition by hand and stamps lastTransitionTime with ctrl.Now() whenever anything in the condition changes, so a new generation with Ready still True moves the time although the status did not flip
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

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

	var d ctrl.Deployment
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &d)
	if err != nil && !ctrl.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err != nil {
		d = ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
		d.Spec.Replicas = app.Spec.Replicas
		d.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		d.Spec.Template.Labels = map[string]string{"app": app.Name}
		d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(&app, &d)
		if err := c.Create(ctx, &d); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.IsControlledBy(&d, &app) {
		if err := ready(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists", "Deployment name is taken by another owner."); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}
	if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	if err := ready(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment is up to date."); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func ready(ctx context.Context, c ctrl.Client, app *ctrl.App, s ctrl.ConditionStatus, reason, msg string) error {
	want := ctrl.Condition{
		Type: "Ready", Status: s, Reason: reason, Message: msg,
		ObservedGeneration: app.Generation, LastTransitionTime: ctrl.Now(),
	}
	changed := app.Status.ObservedGeneration != app.Generation
	found := false
	for i, cur := range app.Status.Conditions {
		if cur.Type != "Ready" {
			continue
		}
		found = true
		if cur.Status != want.Status || cur.Reason != want.Reason || cur.Message != want.Message || cur.ObservedGeneration != want.ObservedGeneration {
			app.Status.Conditions[i] = want
			changed = true
		}
	}
	if !found {
		app.Status.Conditions = append(app.Status.Conditions, want)
		changed = true
	}
	if !changed {
		return nil
	}
	app.Status.ObservedGeneration = app.Generation
	return c.UpdateStatus(ctx, app)
}
