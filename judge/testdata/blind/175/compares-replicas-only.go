// bug: checks only the replica count to decide the Deployment is out of date, so an image-only change never reaches the Deployment and the App reports Ready True with the old image running
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
		nd := ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
		nd.Spec.Replicas = app.Spec.Replicas
		nd.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		nd.Spec.Template.Labels = map[string]string{"app": app.Name}
		nd.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(&app, &nd)
		if err := c.Create(ctx, &nd); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.IsControlledBy(&d, &app) {
		return status(ctx, c, &app, ctrl.Condition{Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists",
			Message: "another Deployment holds this name"}, ctrl.Result{RequeueAfter: 30 * time.Second})
	}

	if d.Spec.Replicas != app.Spec.Replicas {
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

	return status(ctx, c, &app, ctrl.Condition{Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
		Message: "the Deployment matches the App"}, ctrl.Result{})
}

func status(ctx context.Context, c ctrl.Client, app *ctrl.App, cond ctrl.Condition, res ctrl.Result) (ctrl.Result, error) {
	cond.ObservedGeneration = app.Generation
	changed := ctrl.SetCondition(&app.Status.Conditions, cond, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if changed {
		if err := c.UpdateStatus(ctx, app); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}
