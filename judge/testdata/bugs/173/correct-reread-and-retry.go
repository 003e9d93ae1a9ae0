// correct: on a Conflict re-reads the object and redoes the step from the fresh copy (rule 4 allows it), bounded to a few tries
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const (
	myFinalizer = "ctrljudge.dev/registry"
	tries       = 3
)

var registryKey = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

// editRegistry reads the registry, lets change edit its data and writes it
// when change says so, starting over from a fresh read on a Conflict.
func editRegistry(ctx context.Context, c ctrl.Client, change func(map[string]string) bool) error {
	var err error
	for i := 0; i < tries; i++ {
		var reg ctrl.ConfigMap
		if err = c.Get(ctx, registryKey, &reg); err != nil {
			return err
		}
		if reg.Data == nil {
			reg.Data = map[string]string{}
		}
		if !change(reg.Data) {
			return nil
		}
		if err = c.Update(ctx, &reg); !ctrl.IsConflict(err) {
			return err
		}
	}
	return err
}

// editDeployment does the same for the Deployment itself.
func editDeployment(ctx context.Context, c ctrl.Client, key ctrl.ObjectKey, change func(*ctrl.Deployment) bool) error {
	var err error
	for i := 0; i < tries; i++ {
		var d ctrl.Deployment
		if err = c.Get(ctx, key, &d); err != nil {
			return err
		}
		if !change(&d) {
			return nil
		}
		if err = c.Update(ctx, &d); !ctrl.IsConflict(err) {
			return err
		}
	}
	return err
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	entry := req.Namespace + "/" + req.Name

	if d.DeletionTimestamp != nil {
		if !ctrl.ContainsFinalizer(&d, myFinalizer) {
			return ctrl.Result{}, nil
		}
		err := editRegistry(ctx, c, func(data map[string]string) bool {
			if _, ok := data[entry]; !ok {
				return false
			}
			delete(data, entry)
			return true
		})
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, editDeployment(ctx, c, req.NamespacedName, func(d *ctrl.Deployment) bool {
			return ctrl.RemoveFinalizer(d, myFinalizer)
		})
	}

	err := editDeployment(ctx, c, req.NamespacedName, func(d *ctrl.Deployment) bool {
		return d.DeletionTimestamp == nil && ctrl.AddFinalizer(d, myFinalizer)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	return ctrl.Result{}, editRegistry(ctx, c, func(data map[string]string) bool {
		if data[entry] == image {
			if _, ok := data[entry]; ok {
				return false
			}
		}
		data[entry] = image
		return true
	})
}
