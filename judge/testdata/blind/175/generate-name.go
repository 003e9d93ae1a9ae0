// bug: creates the Deployment with GenerateName "<app>-" instead of the App's exact name, so the Get by name never finds it and every call creates another Deployment
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
		d = ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{GenerateName: app.Name + "-", Namespace: app.Namespace}}
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
		ctrl.Log("created Deployment", d.Name)
		return ctrl.Result{}, nil
	}

	var cond ctrl.Condition
	var res ctrl.Result
	if !ctrl.IsControlledBy(&d, &app) {
		cond = ctrl.Condition{Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists", Message: "A Deployment named " + app.Name + " is not this App's."}
		res.RequeueAfter = 30 * time.Second
	} else if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	} else {
		cond = ctrl.Condition{Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate", Message: "Deployment " + app.Name + " is up to date."}
	}
	cond.ObservedGeneration = app.Generation
	changed := ctrl.SetCondition(&app.Status.Conditions, cond, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if changed {
		if err := c.UpdateStatus(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}
