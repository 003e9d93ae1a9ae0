// bug: on a Conflict from the Deployment update or the status write it reads the object again and retries within the same call instead of returning the Conflict error
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

const maxTries = 3

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

	key := ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}
	var d ctrl.Deployment
	if err := c.Get(ctx, key, &d); err != nil {
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
		if err := writeStatus(ctx, c, req, &app, ctrl.ConditionFalse, "ResourceExists", "Deployment "+key.String()+" is not controlled by this App"); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}

	if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		var err error
		for try := 0; try < maxTries; try++ {
			if try > 0 {
				if err = c.Get(ctx, key, &d); err != nil {
					return ctrl.Result{}, err
				}
			}
			d.Spec.Replicas = app.Spec.Replicas
			if len(d.Spec.Template.Spec.Containers) == 0 {
				d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
			}
			d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
			if err = c.Update(ctx, &d); !ctrl.IsConflict(err) {
				break
			}
		}
		return ctrl.Result{}, err
	}

	if err := writeStatus(ctx, c, req, &app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment "+key.String()+" is up to date"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func writeStatus(ctx context.Context, c ctrl.Client, req ctrl.Request, app *ctrl.App, s ctrl.ConditionStatus, reason, msg string) error {
	var err error
	for try := 0; try < maxTries; try++ {
		if try > 0 {
			if err = c.Get(ctx, req.NamespacedName, app); err != nil {
				return err
			}
		}
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
		if err = c.UpdateStatus(ctx, app); !ctrl.IsConflict(err) {
			return err
		}
	}
	return err
}
