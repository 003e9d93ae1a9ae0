// correct: classifies the Deployment into a state first and switches on it; decides whether the status differs by comparing against FindCondition by hand before calling SetCondition
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

type state int

const (
	missing state = iota
	foreign
	stale
	current
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var app ctrl.App
	err := c.Get(ctx, req.NamespacedName, &app)
	switch {
	case ctrl.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	case app.DeletionTimestamp != nil:
		return ctrl.Result{}, nil
	}

	var dep ctrl.Deployment
	s := current
	err = c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &dep)
	switch {
	case ctrl.IsNotFound(err):
		s = missing
	case err != nil:
		return ctrl.Result{}, err
	case !ctrl.IsControlledBy(&dep, &app):
		s = foreign
	case dep.Spec.Replicas != app.Spec.Replicas, ctrl.PodImage(&dep.Spec.Template.Spec) != app.Spec.Image:
		s = stale
	}

	switch s {
	case missing:
		return create(ctx, c, &app)
	case foreign:
		if err := report(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists",
			"Another Deployment already uses the name "+app.Name+"."); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	case stale:
		dep.Spec.Replicas = app.Spec.Replicas
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			dep.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		dep.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, &dep); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	default:
		if err := report(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate",
			"Deployment "+app.Name+" matches the App."); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
}

func create(ctx context.Context, c ctrl.Client, app *ctrl.App) (ctrl.Result, error) {
	var d ctrl.Deployment
	d.Name, d.Namespace = app.Name, app.Namespace
	d.Spec = ctrl.DeploymentSpec{
		Replicas: app.Spec.Replicas,
		Selector: ctrl.LabelSelector{MatchLabels: map[string]string{"app": app.Name}},
	}
	d.Spec.Template.Labels = map[string]string{"app": app.Name}
	d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
	ctrl.SetControllerReference(app, &d)

	err := c.Create(ctx, &d)
	if ctrl.IsAlreadyExists(err) {
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}
	return ctrl.Result{}, err
}

func report(ctx context.Context, c ctrl.Client, app *ctrl.App, st ctrl.ConditionStatus, reason, msg string) error {
	old := ctrl.FindCondition(app.Status.Conditions, "Ready")
	same := old != nil && old.Status == st && old.Reason == reason && old.Message == msg &&
		old.ObservedGeneration == app.Generation && app.Status.ObservedGeneration == app.Generation
	if same {
		return nil
	}
	ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type:               "Ready",
		Status:             st,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: app.Generation,
	}, ctrl.Now())
	app.Status.ObservedGeneration = app.Generation
	return c.UpdateStatus(ctx, app)
}
