// correct: classifies the Deployment into a state first, then a switch runs the writes of that state
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

const theFinalizer = "ctrljudge.dev/registry"

type state int

const (
	gone state = iota
	released
	live
	finalizing
)

func classify(d *ctrl.Deployment) state {
	has := ctrl.ContainsFinalizer(d, theFinalizer)
	switch {
	case d.DeletionTimestamp == nil:
		return live
	case has:
		return finalizing
	default:
		return released
	}
}

func readRegistry(ctx context.Context, c ctrl.Client) (*ctrl.ConfigMap, error) {
	reg := &ctrl.ConfigMap{}
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: "default", Name: "registry"}, reg)
	return reg, err
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	st := gone
	if err := c.Get(ctx, req.NamespacedName, &d); err == nil {
		st = classify(&d)
	} else if !ctrl.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	id := req.Namespace + "/" + req.Name

	switch st {
	case gone, released:
		return ctrl.Result{}, nil

	case live:
		if !ctrl.ContainsFinalizer(&d, theFinalizer) {
			d.Finalizers = append(d.Finalizers, theFinalizer)
			if err := c.Update(ctx, &d); err != nil {
				return ctrl.Result{}, err
			}
		}
		reg, err := readRegistry(ctx, c)
		if err != nil {
			return ctrl.Result{}, err
		}
		img := ctrl.PodImage(&d.Spec.Template.Spec)
		old, ok := reg.Data[id]
		if !ok || old != img {
			if len(reg.Data) == 0 {
				reg.Data = map[string]string{}
			}
			reg.Data[id] = img
			if err := c.Update(ctx, reg); err != nil {
				return ctrl.Result{}, err
			}
		}

	case finalizing:
		reg, err := readRegistry(ctx, c)
		if err != nil {
			return ctrl.Result{}, err
		}
		if _, ok := reg.Data[id]; ok {
			delete(reg.Data, id)
			if err := c.Update(ctx, reg); err != nil {
				return ctrl.Result{}, err
			}
		}
		kept := make([]string, 0, len(d.Finalizers))
		for _, f := range d.Finalizers {
			if f != theFinalizer {
				kept = append(kept, f)
			}
		}
		d.Finalizers = kept
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
