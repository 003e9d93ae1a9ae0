// bug: when a registry write conflicts, copies the fresh resourceVersion onto the map it built from the old read and writes again, erasing the other writer's change
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const finalizer = "ctrljudge.dev/registry"

var registry = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

// forceUpdate writes reg, and on a Conflict tries once more with the
// server's current version.
func forceUpdate(ctx context.Context, c ctrl.Client, reg *ctrl.ConfigMap) error {
	err := c.Update(ctx, reg)
	if !ctrl.IsConflict(err) {
		return err
	}
	var latest ctrl.ConfigMap
	if err := c.Get(ctx, registry, &latest); err != nil {
		return err
	}
	reg.ResourceVersion = latest.ResourceVersion
	return c.Update(ctx, reg)
}

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
			if err := forceUpdate(ctx, c, &reg); err != nil {
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
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	if v, ok := reg.Data[entry]; ok && v == image {
		return ctrl.Result{}, nil
	}
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	reg.Data[entry] = image
	return ctrl.Result{}, forceUpdate(ctx, c, &reg)
}
