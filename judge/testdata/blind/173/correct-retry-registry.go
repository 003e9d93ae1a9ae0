// correct: retries a registry write that meets a Conflict by reading the registry again (bounded), returns other errors
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const fin = "ctrljudge.dev/registry"

var regKey = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

// editRegistry reads the registry, lets mutate change it, and writes it if
// mutate reports a change. On a Conflict it reads again and tries again, a
// few times. If a Conflict happened and no retry wrote, the Conflict is
// returned: the write did not happen in this call.
func editRegistry(ctx context.Context, c ctrl.Client, mutate func(data map[string]string) (map[string]string, bool)) error {
	var conflict error
	for attempt := 0; attempt < 3; attempt++ {
		var reg ctrl.ConfigMap
		if err := c.Get(ctx, regKey, &reg); err != nil {
			return err
		}
		data, changed := mutate(reg.Data)
		if !changed {
			return conflict // nil unless an earlier write was refused
		}
		reg.Data = data
		err := c.Update(ctx, &reg)
		if err == nil {
			return nil
		}
		if !ctrl.IsConflict(err) {
			return err
		}
		conflict = err
	}
	return conflict
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	name := req.Namespace + "/" + req.Name

	if d.DeletionTimestamp != nil {
		if !ctrl.ContainsFinalizer(&d, fin) {
			return ctrl.Result{}, nil
		}
		err := editRegistry(ctx, c, func(data map[string]string) (map[string]string, bool) {
			if _, ok := data[name]; !ok {
				return data, false
			}
			delete(data, name)
			return data, true
		})
		if err != nil {
			return ctrl.Result{}, err
		}
		ctrl.RemoveFinalizer(&d, fin)
		return ctrl.Result{}, c.Update(ctx, &d)
	}

	if ctrl.AddFinalizer(&d, fin) {
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	err := editRegistry(ctx, c, func(data map[string]string) (map[string]string, bool) {
		if v, ok := data[name]; ok && v == image {
			return data, false
		}
		if data == nil {
			data = map[string]string{}
		}
		data[name] = image
		return data, true
	})
	return ctrl.Result{}, err
}
