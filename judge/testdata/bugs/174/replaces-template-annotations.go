// bug: sets the hash by replacing the template's annotation map, dropping every other template annotation
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
	name := d.Annotations[configAnnotation]
	if name == "" {
		return ctrl.Result{}, nil
	}
	var cm ctrl.ConfigMap
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm)
	if ctrl.IsNotFound(err) {
		if _, ok := d.Spec.Template.Annotations[hashAnnotation]; !ok {
			return ctrl.Result{}, nil
		}
		delete(d.Spec.Template.Annotations, hashAnnotation)
		return ctrl.Result{}, c.Update(ctx, &d)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	want := configHash(cm.Data)
	if d.Spec.Template.Annotations[hashAnnotation] == want {
		return ctrl.Result{}, nil
	}
	d.Spec.Template.Annotations = map[string]string{hashAnnotation: want}
	return ctrl.Result{}, c.Update(ctx, &d)
}
