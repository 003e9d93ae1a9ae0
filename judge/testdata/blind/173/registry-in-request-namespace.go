// bug: looks for the registry in the Deployment's own namespace; breaks "a ConfigMap named registry in namespace default, shared by every Deployment"
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const finalizer = "ctrljudge.dev/registry"


func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	entry := req.Namespace + "/" + req.Name
	registry := ctrl.ObjectKey{Namespace: req.Namespace, Name: "registry"}

	if d.DeletionTimestamp == nil {
		if !ctrl.ContainsFinalizer(&d, finalizer) {
			ctrl.AddFinalizer(&d, finalizer)
			if err := c.Update(ctx, &d); err != nil {
				return ctrl.Result{}, err
			}
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
