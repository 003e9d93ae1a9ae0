// bug: adds its finalizer by replacing the whole list, dropping finalizers other controllers put on the Deployment
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
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registry, &reg); err != nil {
		return ctrl.Result{}, err
	}

	if d.DeletionTimestamp != nil {
		if !ctrl.ContainsFinalizer(&d, finalizer) {
			return ctrl.Result{}, nil
		}
		if _, ok := reg.Data[entry]; ok {
			delete(reg.Data, entry)
			if err := c.Update(ctx, &reg); err != nil {
				return ctrl.Result{}, err
			}
		}
		ctrl.RemoveFinalizer(&d, finalizer)
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	if !ctrl.ContainsFinalizer(&d, finalizer) {
		d.Finalizers = []string{finalizer}
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	if reg.Data[entry] == image {
		return ctrl.Result{}, nil
	}
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	reg.Data[entry] = image
	return ctrl.Result{}, c.Update(ctx, &reg)
}
