// bug: keeps the registry in a package variable and reads it only once; breaks rule 2.2, which checks the registry's entry, not a remembered copy (hand edits are missed)
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const finalizer = "ctrljudge.dev/registry"

var registry = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

// cached is the registry as last read or written by this controller.
var cached *ctrl.ConfigMap

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
		if !ctrl.ContainsFinalizer(&d, finalizer) {
			ctrl.AddFinalizer(&d, finalizer)
			if err := c.Update(ctx, &d); err != nil {
				return ctrl.Result{}, err
			}
		}
		if cached == nil {
			cached = &ctrl.ConfigMap{}
			if err := c.Get(ctx, registry, cached); err != nil {
				cached = nil
				return ctrl.Result{}, err
			}
		}
		reg := cached
		image := ctrl.PodImage(&d.Spec.Template.Spec)
		if cur, ok := reg.Data[entry]; ok && cur == image {
			return ctrl.Result{}, nil
		}
		if reg.Data == nil {
			reg.Data = map[string]string{}
		}
		reg.Data[entry] = image
		if err := c.Update(ctx, reg); err != nil {
			cached = nil
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	if !ctrl.ContainsFinalizer(&d, finalizer) {
		return ctrl.Result{}, nil
	}
	if cached == nil {
		cached = &ctrl.ConfigMap{}
		if err := c.Get(ctx, registry, cached); err != nil {
			cached = nil
			return ctrl.Result{}, err
		}
	}
	reg := cached
	if _, ok := reg.Data[entry]; ok {
		delete(reg.Data, entry)
		if err := c.Update(ctx, reg); err != nil {
			cached = nil
			return ctrl.Result{}, err
		}
	}
	ctrl.RemoveFinalizer(&d, finalizer)
	if err := c.Update(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
