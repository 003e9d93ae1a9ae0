// bug: decides the Deployment is the App's by the controller reference's kind and name instead of its UID, so a Deployment left over from a deleted App of the same name is treated as the new App's and updated
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

func isMine(d *ctrl.Deployment, app *ctrl.App) bool {
	ref := ctrl.GetControllerOf(d)
	return ref != nil && ref.Kind == "App" && ref.Name == app.Name
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	app := &ctrl.App{}
	if err := c.Get(ctx, req.NamespacedName, app); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	d := &ctrl.Deployment{}
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, d); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		nd := &ctrl.Deployment{}
		nd.Name, nd.Namespace = app.Name, app.Namespace
		nd.Spec.Replicas = app.Spec.Replicas
		nd.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		nd.Spec.Template.Labels = map[string]string{"app": app.Name}
		nd.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(app, nd)
		if err := c.Create(ctx, nd); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	ready := ctrl.Condition{Type: "Ready", ObservedGeneration: app.Generation}
	var res ctrl.Result
	if !isMine(d, app) {
		ready.Status, ready.Reason, ready.Message = ctrl.ConditionFalse, "ResourceExists", "name taken by a Deployment this App does not control"
		res.RequeueAfter = 30 * time.Second
	} else if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	} else {
		ready.Status, ready.Reason, ready.Message = ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment is up to date"
	}

	changed := ctrl.SetCondition(&app.Status.Conditions, ready, ctrl.Now())
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
