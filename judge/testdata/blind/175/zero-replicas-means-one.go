// bug: treats an App's spec.replicas of 0 as unset and defaults it to 1, so an App scaled to zero gets a Deployment with one replica
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

func wantedReplicas(app *ctrl.App) int32 {
	if app.Spec.Replicas == 0 {
		return 1 // not set: Kubernetes defaults to one
	}
	return app.Spec.Replicas
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	app := new(ctrl.App)
	if err := c.Get(ctx, req.NamespacedName, app); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	replicas := wantedReplicas(app)

	d := new(ctrl.Deployment)
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, d); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		d = &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
		d.Spec.Replicas = replicas
		d.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		d.Spec.Template.Labels = map[string]string{"app": app.Name}
		d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(app, d)
		if err := c.Create(ctx, d); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.IsControlledBy(d, app) {
		if err := setReady(ctx, c, app, ctrl.ConditionFalse, "ResourceExists", "Deployment "+app.Name+" already exists and is not managed by this App"); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}

	if d.Spec.Replicas != replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if err := setReady(ctx, c, app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment "+app.Name+" is up to date"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func setReady(ctx context.Context, c ctrl.Client, app *ctrl.App, s ctrl.ConditionStatus, reason, msg string) error {
	changed := ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type: "Ready", Status: s, Reason: reason, Message: msg, ObservedGeneration: app.Generation,
	}, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if !changed {
		return nil
	}
	return c.UpdateStatus(ctx, app)
}
