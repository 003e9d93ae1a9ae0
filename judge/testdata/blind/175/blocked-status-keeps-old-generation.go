// bug: in rule 4 it sets only the Ready False ResourceExists condition and leaves status.observedGeneration alone, on the reading that observedGeneration is only bumped once the App has been acted on
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
		// We did nothing with this generation, so we do not claim to have observed it.
		if ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
			Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists",
			Message: "Deployment " + app.Name + " exists and is not controlled by this App", ObservedGeneration: app.Generation,
		}, ctrl.Now()) {
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
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
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
		if err := c.UpdateStatus(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
