// correct: returns right after adding the finalizer (its own event brings the registry write); deletion does both writes in one call
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const registryFinalizer = "ctrljudge.dev/registry"

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var dep ctrl.Deployment
	err := c.Get(ctx, req.NamespacedName, &dep)
	if ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	mine := ctrl.ContainsFinalizer(&dep, registryFinalizer)
	deleting := dep.DeletionTimestamp != nil

	if deleting && !mine {
		return ctrl.Result{}, nil
	}
	if !deleting && !mine {
		ctrl.AddFinalizer(&dep, registryFinalizer)
		ctrl.Log("adding finalizer to", req.String())
		return ctrl.Result{}, c.Update(ctx, &dep)
	}

	var reg ctrl.ConfigMap
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: "default", Name: "registry"}, &reg); err != nil {
		return ctrl.Result{}, err
	}
	key := req.Namespace + "/" + req.Name
	current, listed := reg.Data[key]

	if !deleting {
		want := ctrl.PodImage(&dep.Spec.Template.Spec)
		if listed && current == want {
			return ctrl.Result{}, nil
		}
		if reg.Data == nil {
			reg.Data = map[string]string{}
		}
		reg.Data[key] = want
		ctrl.Log("recording", key, want)
		return ctrl.Result{}, c.Update(ctx, &reg)
	}

	if listed {
		delete(reg.Data, key)
		ctrl.Log("forgetting", key)
		if err := c.Update(ctx, &reg); err != nil {
			return ctrl.Result{}, err
		}
	}
	ctrl.RemoveFinalizer(&dep, registryFinalizer)
	ctrl.Log("releasing", key)
	return ctrl.Result{}, c.Update(ctx, &dep)
}
