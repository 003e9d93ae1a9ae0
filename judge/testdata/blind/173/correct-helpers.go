// correct: one helper per duty (ensureFinalizer, ensureEntry, cleanUp), each returning its error
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const ownFinalizer = "ctrljudge.dev/registry"

func registryKey() ctrl.ObjectKey {
	return ctrl.ObjectKey{Namespace: "default", Name: "registry"}
}

func ensureFinalizer(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	if !ctrl.AddFinalizer(d, ownFinalizer) {
		return nil
	}
	return c.Update(ctx, d)
}

func ensureEntry(ctx context.Context, c ctrl.Client, key, image string) error {
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registryKey(), &reg); err != nil {
		return err
	}
	if v, found := reg.Data[key]; found && v == image {
		return nil
	}
	if reg.Data == nil {
		reg.Data = make(map[string]string, 1)
	}
	reg.Data[key] = image
	return c.Update(ctx, &reg)
}

func dropEntry(ctx context.Context, c ctrl.Client, key string) error {
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registryKey(), &reg); err != nil {
		return err
	}
	if _, found := reg.Data[key]; !found {
		return nil
	}
	delete(reg.Data, key)
	return c.Update(ctx, &reg)
}

func cleanUp(ctx context.Context, c ctrl.Client, d *ctrl.Deployment, key string) error {
	if err := dropEntry(ctx, c, key); err != nil {
		return err
	}
	ctrl.RemoveFinalizer(d, ownFinalizer)
	return c.Update(ctx, d)
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := new(ctrl.Deployment)
	if err := c.Get(ctx, req.NamespacedName, d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	key := req.Namespace + "/" + req.Name

	if d.DeletionTimestamp != nil {
		if !ctrl.ContainsFinalizer(d, ownFinalizer) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, cleanUp(ctx, c, d, key)
	}

	if err := ensureFinalizer(ctx, c, d); err != nil {
		return ctrl.Result{}, err
	}
	if err := ensureEntry(ctx, c, key, ctrl.PodImage(&d.Spec.Template.Spec)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
