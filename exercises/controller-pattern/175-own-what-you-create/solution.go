//go:build ignore

package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

// blockedRetry is how long an App waits before it looks again at a name
// it cannot have yet: nothing else will call it when the name frees up.
const blockedRetry = 30 * time.Second

// Reconcile keeps one Deployment per App, named like the App, owned by
// it and in step with its spec, and reports in the App's status. It makes
// at most one write per call; the event of that write brings it back.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var app ctrl.App
	if err := c.Get(ctx, req.NamespacedName, &app); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted: the garbage collector takes its Deployment
		}
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var d ctrl.Deployment
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, &d)
	switch {
	case ctrl.IsNotFound(err):
		err := c.Create(ctx, newDeployment(&app))
		if ctrl.IsAlreadyExists(err) {
			// The name is taken, though our cache does not show by whom
			// yet (perhaps by our own last create): look again soon.
			return ctrl.Result{RequeueAfter: blockedRetry}, nil
		}
		return ctrl.Result{}, err
	case err != nil:
		return ctrl.Result{}, err
	}

	if !ctrl.IsControlledBy(&d, &app) {
		// Someone else's Deployment: never touch it. Its changes send us
		// no events, so only the timer tells us when the name is free.
		if err := setReady(ctx, c, &app, ctrl.ConditionFalse, "ResourceExists",
			"Deployment "+d.Name+" already exists and is not managed by this App"); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: blockedRetry}, nil
	}

	if d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		// Change the two fields the App decides, keep everything else
		// (others' labels, annotations, the rest of the template).
		d.Spec.Replicas = app.Spec.Replicas
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	return ctrl.Result{}, setReady(ctx, c, &app, ctrl.ConditionTrue, "DeploymentUpToDate",
		"Deployment "+d.Name+" runs "+app.Spec.Image)
}

// newDeployment is the App's Deployment, as the statement shapes it.
func newDeployment(app *ctrl.App) *ctrl.Deployment {
	labels := map[string]string{"app": app.Name}
	d := &ctrl.Deployment{
		ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
		Spec: ctrl.DeploymentSpec{
			Replicas: app.Spec.Replicas,
			Selector: ctrl.LabelSelector{MatchLabels: labels},
			Template: ctrl.PodTemplateSpec{
				ObjectMeta: ctrl.ObjectMeta{Labels: map[string]string{"app": app.Name}},
				Spec:       ctrl.PodSpec{Containers: []ctrl.Container{{Name: "server", Image: app.Spec.Image}}},
			},
		},
	}
	ctrl.SetControllerReference(app, d)
	return d
}

// setReady writes the App's status if it differs from the one wanted:
// the Ready condition (whose lastTransitionTime SetCondition keeps unless
// the status flips) and observedGeneration.
func setReady(ctx context.Context, c ctrl.Client, app *ctrl.App, status ctrl.ConditionStatus, reason, msg string) error {
	changed := ctrl.SetCondition(&app.Status.Conditions, ctrl.Condition{
		Type: "Ready", Status: status, Reason: reason, Message: msg, ObservedGeneration: app.Generation,
	}, ctrl.Now())
	if !changed && app.Status.ObservedGeneration == app.Generation {
		return nil
	}
	app.Status.ObservedGeneration = app.Generation
	return c.UpdateStatus(ctx, app)
}
