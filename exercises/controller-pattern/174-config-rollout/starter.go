//go:build ignore

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"ctrljudge/judge/ctrl"
)

const (
	configAnnotation = "ctrljudge.dev/config"      // on the Deployment: the ConfigMap it uses
	hashAnnotation   = "ctrljudge.dev/config-hash" // on its Pod template: the hash of that ConfigMap's data
)

// configHash should hash a ConfigMap's data as the statement defines it.
func configHash(data map[string]string) string {
	h := sha256.New()
	// BUG: in what order does ranging over a map hand out its entries, and
	// is it the same order every time?
	for k, v := range data {
		h.Write([]byte(k + "=" + v + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Reconcile is called with a Deployment's key whenever that Deployment or
// any ConfigMap changes.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	name := d.Annotations[configAnnotation]
	if name == "" {
		return ctrl.Result{}, nil
	}

	var cm ctrl.ConfigMap
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm); err != nil {
		// BUG: a ConfigMap that is not there is a state to act on, not only
		// an error. What should the template say then?
		return ctrl.Result{}, err
	}

	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations[hashAnnotation] = configHash(cm.Data)
	// BUG: this writes on every call, even when the template already says
	// the right hash.
	return ctrl.Result{}, c.Update(ctx, &d)
}
