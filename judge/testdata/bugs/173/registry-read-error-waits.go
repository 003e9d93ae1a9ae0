// bug: when the registry cannot be read, the call gives up quietly and waits for the next event
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const fin = "ctrljudge.dev/registry"

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: "default", Name: "registry"}, &reg); err != nil {
		ctrl.Log("registry unavailable, will try on the next event")
		return ctrl.Result{}, nil
	}
	key := req.Namespace + "/" + req.Name
	img := ctrl.PodImage(&d.Spec.Template.Spec)
	cur, listed := reg.Data[key]
	guarded := ctrl.ContainsFinalizer(&d, fin)

	switch {
	case d.DeletionTimestamp != nil && !guarded:
		return ctrl.Result{}, nil
	case d.DeletionTimestamp != nil:
		if listed {
			delete(reg.Data, key)
			if err := c.Update(ctx, &reg); err != nil {
				return ctrl.Result{}, err
			}
		}
		ctrl.RemoveFinalizer(&d, fin)
		return ctrl.Result{}, c.Update(ctx, &d)
	case !guarded:
		ctrl.AddFinalizer(&d, fin)
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
		fallthrough
	default:
		if listed && cur == img {
			return ctrl.Result{}, nil
		}
		if reg.Data == nil {
			reg.Data = make(map[string]string)
		}
		reg.Data[key] = img
		return ctrl.Result{}, c.Update(ctx, &reg)
	}
}
