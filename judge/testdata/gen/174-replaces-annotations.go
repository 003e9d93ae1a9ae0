// Bug: replaces the template's annotations with its hash alone, dropping the others.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"ctrljudge/judge/ctrl"
)

const (
	configAnnotation = "ctrljudge.dev/config"      // on the Deployment: the ConfigMap it uses
	hashAnnotation   = "ctrljudge.dev/config-hash" // on its Pod template: the hash of that ConfigMap's data
)

// configHash hashes a ConfigMap's data the same way whatever order the map
// hands its entries out in: sorted by key, each as key=value and a newline.
func configHash(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k + "=" + data[k] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Reconcile keeps one Deployment's Pod template stamped with the hash of
// the ConfigMap it names, so that a change of config changes the template
// and rolls the Pods. It is called for the Deployment's own changes and,
// through the watch, for every ConfigMap change.
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
		return ctrl.Result{}, nil // names no ConfigMap: not ours
	}

	// The hash the template should carry, if any.
	want, exists := "", false
	var cm ctrl.ConfigMap
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm)
	switch {
	case err == nil:
		want, exists = configHash(cm.Data), true
	case !ctrl.IsNotFound(err):
		return ctrl.Result{}, err
	}

	have, has := d.Spec.Template.Annotations[hashAnnotation]
	if has == exists && have == want {
		return ctrl.Result{}, nil
	}
	if exists {
		d.Spec.Template.Annotations = map[string]string{}
		d.Spec.Template.Annotations[hashAnnotation] = want
		ctrl.Log("Deployment", d.Name, "takes config-hash", want[:8], "from ConfigMap", name)
	} else {
		delete(d.Spec.Template.Annotations, hashAnnotation)
		ctrl.Log("Deployment", d.Name, "loses its config-hash: ConfigMap", name, "is gone")
	}
	// A Conflict means the Deployment changed since it was read; returning
	// it brings this key back to be decided again from fresh reads.
	return ctrl.Result{}, c.Update(ctx, &d)
}
