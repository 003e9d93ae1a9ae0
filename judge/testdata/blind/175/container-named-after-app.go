// bug: names the Deployment's single container after the App instead of "server"
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
		sel := map[string]string{"app": app.Name}
		tpl := map[string]string{"app": app.Name}
		d = ctrl.Deployment{
			ObjectMeta: ctrl.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
			Spec: ctrl.DeploymentSpec{
				Replicas: app.Spec.Replicas,
				Selector: ctrl.LabelSelector{MatchLabels: sel},
				Template: ctrl.PodTemplateSpec{
					ObjectMeta: ctrl.ObjectMeta{Labels: tpl},
					Spec:       ctrl.PodSpec{Containers: []ctrl.Container{{Name: app.Name, Image: app.Spec.Image}}},
				},
			},
		}
		ctrl.SetControllerReference(&app, &d)
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

	ours := ctrl.IsControlledBy(&d, &app)
	if ours && (d.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image) {
		d.Spec.Replicas = app.Spec.Replicas
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: app.Name}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	cond := ctrl.Condition{Type: "Ready", ObservedGeneration: app.Generation}
	res := ctrl.Result{}
	if ours {
		cond.Status, cond.Reason, cond.Message = ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment is up to date."
	} else {
		cond.Status, cond.Reason, cond.Message = ctrl.ConditionFalse, "ResourceExists", "Deployment is not controlled by this App."
		res.RequeueAfter = 30 * time.Second
	}
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
	return res, nil
}
