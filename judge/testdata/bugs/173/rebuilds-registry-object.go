// bug: writes the registry as a freshly built ConfigMap (name, namespace, resourceVersion, data), dropping the labels and annotations others keep on it
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const finalizer = "ctrljudge.dev/registry"

func saveRegistry(ctx context.Context, c ctrl.Client, old *ctrl.ConfigMap, data map[string]string) error {
	cm := &ctrl.ConfigMap{
		ObjectMeta: ctrl.ObjectMeta{Name: "registry", Namespace: "default", ResourceVersion: old.ResourceVersion},
		Data:       data,
	}
	return c.Update(ctx, cm)
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
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: "default", Name: "registry"}, &reg); err != nil {
		return ctrl.Result{}, err
	}
	data := map[string]string{}
	for k, v := range reg.Data {
		data[k] = v
	}

	if d.DeletionTimestamp != nil {
		if !ctrl.ContainsFinalizer(&d, finalizer) {
			return ctrl.Result{}, nil
		}
		if _, ok := data[entry]; ok {
			delete(data, entry)
			if err := saveRegistry(ctx, c, &reg, data); err != nil {
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
	if v, ok := data[entry]; ok && v == image {
		return ctrl.Result{}, nil
	}
	data[entry] = image
	return ctrl.Result{}, saveRegistry(ctx, c, &reg, data)
}
