// bug: deletes a drifted Deployment to create it afresh instead of updating it
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
	var dep ctrl.Deployment
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &dep); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		dep = ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
		dep.Spec.Replicas = app.Spec.Replicas
		dep.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		dep.Spec.Template.Labels = map[string]string{"app": app.Name}
		dep.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(&app, &dep)
		if err := c.Create(ctx, &dep); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	if !ctrl.IsControlledBy(&dep, &app) {
		if ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists",
			Message: "the name is taken", ObservedGeneration: app.Generation}, ctrl.Now()) || app.Status.ObservedGeneration != app.Generation {
			app.Status.ObservedGeneration = app.Generation
			if err := c.UpdateStatus(ctx, &app); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}
	if dep.Spec.Replicas != app.Spec.Replicas || dep.Spec.Template.Spec.Containers[0].Image != app.Spec.Image {
		return ctrl.Result{}, c.Delete(ctx, &dep)
	}
	if ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
		Message: "up to date", ObservedGeneration: app.Generation}, ctrl.Now()) || app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		return ctrl.Result{}, c.UpdateStatus(ctx, &app)
	}
	return ctrl.Result{}, nil
}
