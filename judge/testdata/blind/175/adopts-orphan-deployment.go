// bug: when the Deployment under the App's name has no controller at all, it adopts it (sets itself as controller and updates it) the way ReplicaSets adopt orphan Pods, instead of leaving it alone and reporting ResourceExists
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
	if ctrl.IsNotFound(err) {
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
	} else if err != nil {
		return ctrl.Result{}, err
	}

	// Orphans (no controller at all) are fair game: adopt them.
	if ctrl.GetControllerOf(&d) == nil {
		ctrl.SetControllerReference(&app, &d)
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.IsControlledBy(&d, &app) {
		changed := ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
			Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists",
			Message: "Deployment " + app.Name + " belongs to another controller", ObservedGeneration: app.Generation,
		}, ctrl.Now())
		if app.Status.ObservedGeneration != app.Generation {
			app.Status.ObservedGeneration = app.Generation
			changed = true
		}
		if changed {
			if err := c.UpdateStatus(ctx, &app); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}

	if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	changed := ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
		Message: "Deployment " + app.Name + " is up to date", ObservedGeneration: app.Generation,
	}, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if changed {
		return ctrl.Result{}, c.UpdateStatus(ctx, &app)
	}
	return ctrl.Result{}, nil
}
