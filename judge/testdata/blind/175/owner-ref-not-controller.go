// bug: writes the owner reference by hand and leaves out controller: true, so the App never becomes the Deployment's controller and the next call finds its own Deployment "not this App's"
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
		d = ctrl.Deployment{
			ObjectMeta: ctrl.ObjectMeta{
				Name:      app.Name,
				Namespace: app.Namespace,
				OwnerReferences: []ctrl.OwnerReference{{
					APIVersion:         "serving.example.com/v1",
					Kind:               "App",
					Name:               app.Name,
					UID:                app.UID,
					BlockOwnerDeletion: true,
				}},
			},
		}
		d.Spec.Replicas = app.Spec.Replicas
		d.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		d.Spec.Template.Labels = map[string]string{"app": app.Name}
		d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		if err := c.Create(ctx, &d); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	var cond ctrl.Condition
	blocked := !ctrl.IsControlledBy(&d, &app)
	switch {
	case blocked:
		cond = ctrl.Condition{Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists", Message: "Deployment is not controlled by this App."}
	case d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image:
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &d)
	default:
		cond = ctrl.Condition{Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate", Message: "Deployment is up to date."}
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
	if blocked {
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}
	return ctrl.Result{}, nil
}
