// bug: updates the Deployment on every call even when it already carries the finalizer; breaks idempotency ("with nothing changed, makes no writes")
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const finalizer = "ctrljudge.dev/registry"

var registry = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	entry := req.Namespace + "/" + req.Name

	if d.DeletionTimestamp == nil {
		ctrl.AddFinalizer(&d, finalizer)
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		var reg ctrl.ConfigMap
		if err := c.Get(ctx, registry, &reg); err != nil {
			return ctrl.Result{}, err
		}
		image := ctrl.PodImage(&d.Spec.Template.Spec)
		if cur, ok := reg.Data[entry]; ok && cur == image {
			return ctrl.Result{}, nil
		}
		if reg.Data == nil {
			reg.Data = map[string]string{}
		}
		reg.Data[entry] = image
		if err := c.Update(ctx, &reg); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.ContainsFinalizer(&d, finalizer) {
		return ctrl.Result{}, nil
	}
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registry, &reg); err != nil {
		return ctrl.Result{}, err
	}
	if _, ok := reg.Data[entry]; ok {
		delete(reg.Data, entry)
		if err := c.Update(ctx, &reg); err != nil {
			return ctrl.Result{}, err
		}
	}
	ctrl.RemoveFinalizer(&d, finalizer)
	if err := c.Update(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
