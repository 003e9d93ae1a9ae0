// bug: when the ConfigMap is gone clears the template's whole annotation map instead of deleting only the hash
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"ctrljudge/judge/ctrl"
)

const (
	configAnnotation = "ctrljudge.dev/config"
	hashAnnotation   = "ctrljudge.dev/config-hash"
)

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

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	name, ok := d.Annotations[configAnnotation]
	if !ok {
		return ctrl.Result{}, nil
	}
	var cm ctrl.ConfigMap
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if _, has := d.Spec.Template.Annotations[hashAnnotation]; !has {
			return ctrl.Result{}, nil
		}
		d.Spec.Template.Annotations = nil // no config, no hash
		return ctrl.Result{}, c.Update(ctx, &d)
	}
	want := configHash(cm.Data)
	if got, has := d.Spec.Template.Annotations[hashAnnotation]; has && got == want {
		return ctrl.Result{}, nil
	}
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations[hashAnnotation] = want
	return ctrl.Result{}, c.Update(ctx, &d)
}
