// bug: returns early when status.observedGeneration already equals the App's generation and Ready is True, so a Deployment that drifted or was deleted by hand is never put right until the spec changes
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

	// Fast path: this generation has already been reconciled.
	if app.Status.ObservedGeneration == app.Generation {
		if rc := ctrl.FindCondition(app.Status.Conditions, "Ready"); rc != nil && rc.Status == ctrl.ConditionTrue {
			return ctrl.Result{}, nil
		}
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

	ready := ctrl.Condition{Type: "Ready", ObservedGeneration: app.Generation}
	var res ctrl.Result
	if !ctrl.IsControlledBy(&d, &app) {
		ready.Status, ready.Reason, ready.Message = ctrl.ConditionFalse, "ResourceExists", "Deployment not controlled by this App"
		res.RequeueAfter = 30 * time.Second
	} else if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &d)
	} else {
		ready.Status, ready.Reason, ready.Message = ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment up to date"
	}

	changed := ctrl.SetCondition(&app.Status.Conditions, ready, ctrl.Now())
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
