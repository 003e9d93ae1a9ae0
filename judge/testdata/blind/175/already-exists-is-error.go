// bug: returns the AlreadyExists error from the create instead of RequeueAfter 30s and no error
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

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
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, d)
	switch {
	case ctrl.IsNotFound(err):
		return ctrl.Result{}, c.Create(ctx, newDeployment(app))
	case err != nil:
		return ctrl.Result{}, err
	}

	if !ctrl.IsControlledBy(d, app) {
		if err := updateReady(ctx, c, app, false); err != nil {
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
		return ctrl.Result{}, c.Update(ctx, d)
	}

	return ctrl.Result{}, updateReady(ctx, c, app, true)
}

func newDeployment(app *ctrl.App) *ctrl.Deployment {
	d := &ctrl.Deployment{
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
	ctrl.SetControllerReference(app, d)
	return d
}

func updateReady(ctx context.Context, c ctrl.Client, app *ctrl.App, ok bool) error {
	cond := ctrl.Condition{Type: "Ready", ObservedGeneration: app.Generation}
	if ok {
		cond.Status, cond.Reason, cond.Message = ctrl.ConditionTrue, "DeploymentUpToDate", "The Deployment is up to date."
	} else {
		cond.Status, cond.Reason, cond.Message = ctrl.ConditionFalse, "ResourceExists", "A Deployment of this name is not controlled by the App."
	}
	changed := ctrl.SetCondition(&app.Status.Conditions, cond, ctrl.Now())
	if app.Status.ObservedGeneration != app.Generation {
		app.Status.ObservedGeneration = app.Generation
		changed = true
	}
	if !changed {
		return nil
	}
	return c.UpdateStatus(ctx, app)
}
