// correct: first computes a plan (one action value: nothing, create, update, or status with a result) from what it read, then carries out that single action; the owner reference is checked with GetControllerOf and the status difference with a copy of the Ready condition taken before SetCondition
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

type action int

const (
	actCreate action = iota + 1
	actUpdate
	actStatus
)

type plan struct {
	act     action
	dep     *ctrl.Deployment
	ready   ctrl.Condition
	requeue time.Duration
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

	cur := &ctrl.Deployment{}
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, cur)
	if err != nil && !ctrl.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err != nil {
		cur = nil
	}

	p := decide(app, cur)
	switch p.act {
	case actCreate:
		if err := c.Create(ctx, p.dep); err != nil {
			if ctrl.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	case actUpdate:
		if err := c.Update(ctx, p.dep); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	var before *ctrl.Condition
	if old := ctrl.FindCondition(app.Status.Conditions, "Ready"); old != nil {
		cp := *old
		before = &cp
	}
	ctrl.SetCondition(&app.Status.Conditions, p.ready, ctrl.Now())
	after := ctrl.FindCondition(app.Status.Conditions, "Ready")
	differs := before == nil ||
		before.Status != after.Status || before.Reason != after.Reason ||
		before.Message != after.Message || before.ObservedGeneration != after.ObservedGeneration ||
		app.Status.ObservedGeneration != app.Generation
	if differs {
		app.Status.ObservedGeneration = app.Generation
		if err := c.UpdateStatus(ctx, app); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

func decide(app *ctrl.App, cur *ctrl.Deployment) plan {
	if cur == nil {
		d := &ctrl.Deployment{}
		d.Name, d.Namespace = app.Name, app.Namespace
		d.Spec.Replicas = app.Spec.Replicas
		d.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		d.Spec.Template.Labels = map[string]string{"app": app.Name}
		d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		ctrl.SetControllerReference(app, d)
		return plan{act: actCreate, dep: d}
	}

	ref := ctrl.GetControllerOf(cur)
	if ref == nil || ref.UID != app.UID {
		return plan{act: actStatus, requeue: 30 * time.Second, ready: ctrl.Condition{
			Type: "Ready", Status: ctrl.ConditionFalse, Reason: "ResourceExists",
			Message: "Deployment " + app.Namespace + "/" + app.Name + " exists but is not controlled by this App.", ObservedGeneration: app.Generation,
		}}
	}

	tpl := &cur.Spec.Template.Spec
	if cur.Spec.Replicas != app.Spec.Replicas || ctrl.PodImage(tpl) != app.Spec.Image {
		cur.Spec.Replicas = app.Spec.Replicas
		if len(tpl.Containers) == 0 {
			tpl.Containers = append(tpl.Containers, ctrl.Container{Name: "server"})
		}
		tpl.Containers[0].Image = app.Spec.Image
		return plan{act: actUpdate, dep: cur}
	}

	return plan{act: actStatus, ready: ctrl.Condition{
		Type: "Ready", Status: ctrl.ConditionTrue, Reason: "DeploymentUpToDate",
		Message: "Deployment " + app.Namespace + "/" + app.Name + " runs " + app.Spec.Image + ".", ObservedGeneration: app.Generation,
	}}
}
