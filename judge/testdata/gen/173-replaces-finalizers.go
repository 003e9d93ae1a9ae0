// Bug: sets the finalizer list to its own finalizer alone instead of adding to it.
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

// finalizer holds a Deployment back from deletion until its registry entry
// is gone.
const finalizer = "ctrljudge.dev/registry"

// registry is the shared ConfigMap every Deployment is recorded in.
var registry = ctrl.ObjectKey{Namespace: "default", Name: "registry"}

// Reconcile keeps the registry entry of one Deployment in step with it:
// recorded while it lives, removed before it goes. The finalizer is what
// makes "before it goes" possible, so it is on before any entry exists
// and off only after the entry is gone; a crash between two writes leaves
// a state the next call finishes from.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			// Gone for good: had it carried our finalizer, its entry
			// would have been removed before it could go.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	entry := req.Namespace + "/" + req.Name
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, cleanUp(ctx, c, &d, entry)
	}

	// The guard first: from here on the Deployment cannot vanish before
	// this controller has had its say.
	if !ctrl.ContainsFinalizer(&d, finalizer) {
		d.Finalizers = []string{finalizer}
		if err := c.Update(ctx, &d); err != nil {
			return ctrl.Result{}, err // a Conflict is retried with a fresh read
		}
		ctrl.Log("added the finalizer to", d.Name)
	}

	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registry, &reg); err != nil {
		return ctrl.Result{}, err
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	if got, ok := reg.Data[entry]; ok && got == image {
		return ctrl.Result{}, nil // nothing to do writes nothing
	}
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	reg.Data[entry] = image
	if err := c.Update(ctx, &reg); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.Log("recorded", entry, "as", image)
	return ctrl.Result{}, nil
}

// cleanUp runs while d is being deleted: the entry goes first, then the
// finalizer, in the same call, because a registry write brings no event
// that would call Reconcile again.
func cleanUp(ctx context.Context, c ctrl.Client, d *ctrl.Deployment, entry string) error {
	if !ctrl.ContainsFinalizer(d, finalizer) {
		return nil // cleaned up already; other finalizers are not ours
	}
	var reg ctrl.ConfigMap
	if err := c.Get(ctx, registry, &reg); err != nil {
		return err
	}
	if _, ok := reg.Data[entry]; ok {
		delete(reg.Data, entry)
		if err := c.Update(ctx, &reg); err != nil {
			return err // the entry is still there, so the finalizer stays
		}
		ctrl.Log("removed", entry, "from the registry")
	}
	// A crash right here is harmless: the next call finds no entry and
	// comes straight to this point.
	ctrl.RemoveFinalizer(d, finalizer)
	if err := c.Update(ctx, d); err != nil {
		return err
	}
	ctrl.Log("released", d.Name)
	return nil
}
