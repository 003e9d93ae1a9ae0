//go:build ignore

package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

// finalizer holds a Deployment back from deletion until this controller
// removes it.
const finalizer = "ctrljudge.dev/registry"

// registry is the shared ConfigMap every Deployment is recorded in.
var registry = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

// Reconcile keeps the registry entry of one Deployment: recorded while it
// lives, removed before it goes.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	// BUG: a Deployment that is gone for good shows up here as NotFound.
	// Will a retry ever make it come back?
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
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
		// BUG: once the finalizer is off, the API server deletes the
		// Deployment. What happens to the entry if the controller dies
		// before the next write?
		ctrl.RemoveFinalizer(&d, finalizer)
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		delete(reg.Data, entry)
		return ctrl.Result{}, c.Update(ctx, &reg)
	}

	if ctrl.AddFinalizer(&d, finalizer) {
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	// BUG: this writes the registry on every call. What should a call
	// that finds the entry already right do?
	reg.Data[entry] = ctrl.PodImage(&d.Spec.Template.Spec)
	return ctrl.Result{}, c.Update(ctx, &reg)
}
