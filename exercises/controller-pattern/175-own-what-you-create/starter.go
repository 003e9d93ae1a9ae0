//go:build ignore

package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

// Reconcile is called with an App's key whenever the App or a Deployment it
// controls changes. It should keep one Deployment per App, named like the
// App, and report in the App's status.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var app ctrl.App
	if err := c.Get(ctx, req.NamespacedName, &app); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted: its Deployment goes with it
		}
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var d ctrl.Deployment
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &d)
	if ctrl.IsNotFound(err) {
		d := newDeployment(&app)
		// BUG: a create can fail because the name is taken, by a create of
		// ours that the cache does not show yet or by someone else. Is
		// that a failure to report, or news to act on?
		return ctrl.Result{}, c.Create(ctx, d)
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	// BUG: a Deployment with the App's name is not necessarily the App's.
	// Whose is it, and what may we do to it?
	if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		d.Spec.Replicas = app.Spec.Replicas
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	if app.Status.ObservedGeneration == app.Generation {
		return ctrl.Result{}, nil
	}
	app.Status.ObservedGeneration = app.Generation
	// BUG: lastTransitionTime says since when the status holds. And whose
	// are the other conditions in the list?
	app.Status.Conditions = []ctrl.Condition{{
		Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
		Message: "the Deployment is up to date", ObservedGeneration: app.Generation, LastTransitionTime: ctrl.Now(),
	}}
	return ctrl.Result{}, c.UpdateStatus(ctx, &app)
}

// newDeployment is the App's Deployment.
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
