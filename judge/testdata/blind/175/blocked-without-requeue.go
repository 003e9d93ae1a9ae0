// bug: when the name is taken by a Deployment that is not the App's, it reports ResourceExists but returns an empty Result, so the App never looks again and stays blocked after the foreign Deployment is deleted
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

	key := ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}
	var dep ctrl.Deployment
	if err := c.Get(ctx, key, &dep); ctrl.IsNotFound(err) {
		dep = ctrl.Deployment{}
		dep.Name = app.Name
		dep.Namespace = app.Namespace
		dep.Spec.Replicas = app.Spec.Replicas
		dep.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		dep.Spec.Template.Labels = map[string]string{"app": app.Name}
		dep.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(&app, &dep)
		err := c.Create(ctx, &dep)
		if ctrl.IsAlreadyExists(err) {
			return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
		}
		return ctrl.Result{}, err
	} else if err != nil {
		return ctrl.Result{}, err
	}

	var cond ctrl.Condition
	if !ctrl.IsControlledBy(&dep, &app) {
		// The event for our App will come back when something changes.
		cond = ctrl.Condition{Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists",
			Message: "Deployment " + key.String() + " is not controlled by this App"}
	} else if dep.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&dep.Spec.Template.Spec) != app.Spec.Image {
		dep.Spec.Replicas = app.Spec.Replicas
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			dep.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		dep.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &dep)
	} else {
		cond = ctrl.Condition{Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
			Message: "Deployment " + key.String() + " is up to date"}
	}
	cond.ObservedGeneration = app.Generation

	dirty := ctrl.SetCondition(&app.Status.Conditions, cond, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		dirty = true
	}
	if dirty {
		if err := c.UpdateStatus(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
