// bug: writes the status only when status.observedGeneration lags the App's generation and ignores what SetCondition reports, so when a blocked App gets its own Deployment at the same generation it never flips from ResourceExists to Ready True
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
		d.Name = app.Name
		d.Namespace = app.Namespace
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
		if err := publish(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists", "The Deployment "+app.Name+" is not this App's."); err != nil {
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

	if err := publish(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate", "The Deployment "+app.Name+" is up to date."); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// publish writes the status once per generation.
func publish(ctx context.Context, c ctrl.Client, app *ctrl.App, s ctrl.ConditionStatus, reason, msg string) error {
	if app.Status.ObservedGeneration == app.Generation {
		return nil
	}
	ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type: "Ready", Status: s, Reason: reason, Message: msg, ObservedGeneration: app.Generation,
	}, ctrl.Now())
	app.Status.ObservedGeneration = app.Generation
	return c.UpdateStatus(ctx, app)
}
