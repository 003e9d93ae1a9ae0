// bug: after adding the finalizer returns a made-up error "to come back for the entry", though nothing failed (rule 4: only a failed Update's error)
package main

import (
	"context"
	"errors"

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

	if d.DeletionTimestamp != nil {
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
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	if ctrl.AddFinalizer(&d, finalizer) {
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		// One step at a time: the retry records the entry.
		return ctrl.Result{}, errors.New("finalizer added; entry on the next pass")
	}
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registry, &reg); err != nil {
		return ctrl.Result{}, err
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	if v, ok := reg.Data[entry]; ok && v == image {
		return ctrl.Result{}, nil
	}
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	reg.Data[entry] = image
	return ctrl.Result{}, c.Update(ctx, &reg)
}
