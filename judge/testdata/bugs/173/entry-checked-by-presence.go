// bug: writes the entry only when it is missing, so a new image (or a hand-edited value) is never recorded
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
	_, listed := reg.Data[entry]

	if d.DeletionTimestamp != nil {
		if !ctrl.ContainsFinalizer(&d, finalizer) {
			return ctrl.Result{}, nil
		}
		if listed {
			delete(reg.Data, entry)
			if err := c.Update(ctx, &reg); err != nil {
				return ctrl.Result{}, err
			}
		}
		ctrl.RemoveFinalizer(&d, finalizer)
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	if ctrl.AddFinalizer(&d, finalizer) {
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	if listed {
		return ctrl.Result{}, nil
	}
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	reg.Data[entry] = ctrl.PodImage(&d.Spec.Template.Spec)
	return ctrl.Result{}, c.Update(ctx, &reg)
}
