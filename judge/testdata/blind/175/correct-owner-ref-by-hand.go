// correct: checks ownership by walking the owner references itself (controller flag and UID), upserts the Ready condition by hand with its own transition-time logic, and keeps a status snapshot to decide whether to write
package main

import (
	"context"
	"time"

	"ctrljudge/judge/ctrl"
)

func ownsIt(app *ctrl.App, d *ctrl.Deployment) bool {
	for _, r := range d.OwnerReferences {
		if r.Controller {
			return r.UID == app.UID
		}
	}
	return false
}

func upsertReady(app *ctrl.App, status ctrl.ConditionStatus, reason, message string) {
	for i := range app.Status.Conditions {
		cond := &app.Status.Conditions[i]
		if cond.Type != "Ready" {
			continue
		}
		if cond.Status != status {
			cond.LastTransitionTime = ctrl.Now()
		}
		cond.Status = status
		cond.Reason = reason
		cond.Message = message
		cond.ObservedGeneration = app.Generation
		return
	}
	app.Status.Conditions = append(app.Status.Conditions, ctrl.Condition{
		Type:               "Ready",
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: app.Generation,
		LastTransitionTime: ctrl.Now(),
	})
}

type snapshot struct {
	gen     int64
	present bool
	cond    ctrl.Condition
}

func snap(app *ctrl.App) snapshot {
	s := snapshot{gen: app.Status.ObservedGeneration}
	if c := ctrl.FindCondition(app.Status.Conditions, "Ready"); c != nil {
		s.present = true
		s.cond = *c
	}
	return s
}

func writeStatus(ctx context.Context, c ctrl.Client, app *ctrl.App, status ctrl.ConditionStatus, reason, message string) error {
	before := snap(app)
	upsertReady(app, status, reason, message)
	app.Status.ObservedGeneration = app.Generation
	if before == snap(app) {
		return nil
	}
	return c.UpdateStatus(ctx, app)
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	app := new(ctrl.App)
	if err := c.Get(ctx, req.NamespacedName, app); ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	d := new(ctrl.Deployment)
	getErr := c.Get(ctx, ctrl.ObjectKey{Namespace: app.Namespace, Name: app.Name}, d)
	if ctrl.IsNotFound(getErr) {
		d = &ctrl.Deployment{
			ObjectMeta: ctrl.ObjectMeta{
				Name:      app.Name,
				Namespace: app.Namespace,
				OwnerReferences: []ctrl.OwnerReference{{
					APIVersion: "serving.example.com/v1",
					Kind:       "App",
					Name:       app.Name,
					UID:        app.UID,
					Controller: true,
				}},
			},
		}
		d.Spec.Replicas = app.Spec.Replicas
		d.Spec.Selector.MatchLabels = map[string]string{"app": app.Name}
		d.Spec.Template.ObjectMeta.Labels = map[string]string{"app": app.Name}
		d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server", Image: app.Spec.Image}}
		switch err := c.Create(ctx, d); {
		case err == nil:
			return ctrl.Result{}, nil
		case ctrl.IsAlreadyExists(err):
			return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
		default:
			return ctrl.Result{}, err
		}
	}
	if getErr != nil {
		return ctrl.Result{}, getErr
	}

	if !ownsIt(app, d) {
		if err := writeStatus(ctx, c, app, ctrl.ConditionFalse, "ResourceExists", "The name is held by a Deployment this App does not control."); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}

	needUpdate := false
	if d.Spec.Replicas != app.Spec.Replicas {
		d.Spec.Replicas = app.Spec.Replicas
		needUpdate = true
	}
	if ctrl.PodImage(&d.Spec.Template.Spec) != app.Spec.Image {
		if len(d.Spec.Template.Spec.Containers) == 0 {
			d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "server"}}
		}
		d.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
		needUpdate = true
	}
	if needUpdate {
		if err := c.Update(ctx, d); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if err := writeStatus(ctx, c, app, ctrl.ConditionTrue, "DeploymentUpToDate", "Deployment is up to date."); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
