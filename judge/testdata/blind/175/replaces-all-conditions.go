// bug: replaces the whole status.conditions list with just the Ready condition, dropping conditions of other types that belong to someone else
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

	if !ctrl.IsControlledBy(&d, &app) {
		if err := writeReady(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists", "name already used by a Deployment this App does not control"); err != nil {
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

	if err := writeReady(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment up to date"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// writeReady keeps the stored Ready condition (for its lastTransitionTime) and
// rebuilds the list around it.
func writeReady(ctx context.Context, c ctrl.Client, app *ctrl.App, s ctrl.ConditionStatus, reason, msg string) error {
	var conds []ctrl.Condition
	if old := ctrl.FindCondition(app.Status.Conditions, "Ready"); old != nil {
		conds = append(conds, *old)
	}
	changed := ctrl.SetCondition(&conds, ctrl.Condition{
		Type: "Ready", Status: s, Reason: reason, Message: msg, ObservedGeneration: app.Generation,
	}, ctrl.Now())
	app.Status.Conditions = conds
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if !changed {
		return nil
	}
	return c.UpdateStatus(ctx, app)
}
