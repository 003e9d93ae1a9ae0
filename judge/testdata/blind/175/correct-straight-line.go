// correct: follows the rules top to bottom in one function, returning from each rule as it goes
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
	if err != nil && !ctrl.IsNotFound(err) {
		return ctrl.Result{}, err
	}

	if ctrl.IsNotFound(err) {
		labels := map[string]string{"app": app.Name}
		nd := ctrl.Deployment{
			ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
			Spec: ctrl.DeploymentSpec{
				Replicas: app.Spec.Replicas,
				Selector: ctrl.LabelSelector{MatchLabels: labels},
				Template: ctrl.PodTemplateSpec{
					ObjectMeta: ctrl.ObjectMeta{Labels: map[string]string{"app": app.Name}},
					Spec: ctrl.PodSpec{
						Containers: []ctrl.Container{{Name: "server", Image: app.Spec.Image}},
					},
				},
			},
		}
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
		changed := ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
			Type:               "Ready",
			Status:             ctrl.ConditionFalse,
			Reason:             "ResourceExists",
			Message:            "A Deployment with this name already exists and is not controlled by this App.",
			ObservedGeneration: app.Generation,
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
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, ctrl.Container{Name: "server"})
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	changed := ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type:               "Ready",
		Status:             ctrl.ConditionTrue,
		Reason:             "DeploymentUpToDate",
		Message:            "The Deployment runs the App's image and replica count.",
		ObservedGeneration: app.Generation,
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
