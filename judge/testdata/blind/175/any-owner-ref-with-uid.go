// bug: treats the Deployment as the App's when any owner reference carries the App's UID, ignoring the controller flag, so a Deployment with a non-controller owner reference to the App gets taken over and updated
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
		return createDeployment(ctx, c, &app)
	}

	owned := false
	for _, ref := range d.OwnerReferences {
		if ref.UID == app.UID {
			owned = true
			break
		}
	}

	if !owned {
		if err := status(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists", "Deployment exists and is not managed by this App"); err != nil {
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
	return ctrl.Result{}, status(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment is up to date")
}

func createDeployment(ctx context.Context, c ctrl.Client, app *ctrl.App) (ctrl.Result, error) {
	d := ctrl.Deployment{
		ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
		Spec: ctrl.DeploymentSpec{
			Replicas: app.Spec.Replicas,
			Selector: ctrl.LabelSelector{MatchLabels: map[string]string{"app": app.Name}},
			Template: ctrl.PodTemplateSpec{
				ObjectMeta: ctrl.ObjectMeta{Labels: map[string]string{"app": app.Name}},
				Spec:       ctrl.PodSpec{Containers: []ctrl.Container{{Name: "server", Image: app.Spec.Image}}},
			},
		},
	}
	ctrl.SetControllerReference(app, &d)
	if err := c.Create(ctx, &d); err != nil {
		if ctrl.IsAlreadyExists(err) {
			return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func status(ctx context.Context, c ctrl.Client, app *ctrl.App, s ctrl.ConditionStatus, reason, msg string) error {
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
