// bug: when the rule-4 status write fails it returns RequeueAfter 30s together with the error, instead of an empty Result and the error
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
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &d); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
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
		// Whatever happens with the status, we want to look again in 30s.
		res := ctrl.Result{RequeueAfter: 30 * time.Second}
		return res, setReady(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists", "Deployment "+app.Name+" is held by someone else")
	}

	if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	return ctrl.Result{}, setReady(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment "+app.Name+" is up to date")
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
