// bug: on a Conflict takes only the new resourceVersion and writes its old copy again; breaks "writing your old copy again with the new resourceVersion would erase the other writer's change"
package main

import (
	"context"

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
		if err := updateRetry(ctx, c, &reg); err != nil {
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
		if err := updateRetry(ctx, c, &reg); err != nil {
			return ctrl.Result{}, err
		}
	}
	ctrl.RemoveFinalizer(&d, finalizer)
	if err := updateRetry(ctx, c, &d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// updateRetry writes obj; on a Conflict it fetches the latest
// resourceVersion and writes obj again with it.
func updateRetry(ctx context.Context, c ctrl.Client, obj ctrl.Object) error {
	err := c.Update(ctx, obj)
	for i := 0; i < 3 && ctrl.IsConflict(err); i++ {
		var latest ctrl.Object
		switch obj.(type) {
		case *ctrl.ConfigMap:
			latest = &ctrl.ConfigMap{}
		default:
			latest = &ctrl.Deployment{}
		}
		if gerr := c.Get(ctx, ctrl.KeyOf(obj), latest); gerr != nil {
			return err
		}
		obj.GetObjectMeta().ResourceVersion = latest.GetObjectMeta().ResourceVersion
		err = c.Update(ctx, obj)
	}
	return err
}
