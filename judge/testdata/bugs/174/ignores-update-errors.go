// bug: logs a failed Update and returns nil, so a hash lost to a Conflict stays unwritten until some other event
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
	if err != nil && !ctrl.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	want := ""
	if exists {
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
	if err := c.Update(ctx, &d); err != nil {
		ctrl.Log("could not update", d.Name+":", err.Error())
	}
	return ctrl.Result{}, nil
}
