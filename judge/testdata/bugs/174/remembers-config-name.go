// bug: remembers which ConfigMap each Deployment named the first time it saw it, so switching the annotation (a metadata-only change) is ignored until a restart
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

// configOf caches the ConfigMap name per Deployment UID: the annotation is
// set once, when the Deployment is created.
var configOf = map[string]string{}

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
	name, ok := configOf[d.UID]
	if !ok {
		name = d.Annotations[configAnnotation]
		configOf[d.UID] = name
	}
	if name == "" || d.Annotations[configAnnotation] == "" {
		return ctrl.Result{}, nil
	}
	want, exists := "", true
	var cm ctrl.ConfigMap
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		exists = false
	} else {
		want = configHash(cm.Data)
	}
	got, has := d.Spec.Template.Annotations[hashAnnotation]
	if has == exists && got == want {
		return ctrl.Result{}, nil
	}
	if exists {
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations[hashAnnotation] = want
	} else {
		delete(d.Spec.Template.Annotations, hashAnnotation)
	}
	return ctrl.Result{}, c.Update(ctx, &d)
}
