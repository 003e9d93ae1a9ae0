// bug: writes the App's status on every call of rules 4 and 6 without checking whether it differs, so a call that finds everything in place still makes a status write
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

	result := ctrl.Result{}
	cond := ctrl.Condition{Type: "Ready", ObservedGeneration: app.Generation}
	if !ctrl.IsControlledBy(&d, &app) {
		cond.Status = ctrl.ConditionFalse
		cond.Reason = "ResourceExists"
		cond.Message = "Deployment " + app.Name + " is owned by someone else"
		result.RequeueAfter = 30 * time.Second
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
		cond.Status = ctrl.ConditionTrue
		cond.Reason = "DeploymentUpToDate"
		cond.Message = "Deployment " + app.Name + " is up to date"
	}

	ctrl.SetCondition(&app.Status.Conditions, cond, ctrl.Now())
	app.Status.ObservedGeneration = app.Generation
	if err := c.UpdateStatus(ctx, &app); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}
