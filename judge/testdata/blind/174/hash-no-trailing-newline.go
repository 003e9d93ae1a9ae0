// bug: joins entries with "\n" between them, dropping the final newline (hash step 2: each entry ends with a newline)
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

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
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, k+"="+data[k])
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
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
	exists := true
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		exists = false
	}

	current, has := d.Spec.Template.Annotations[hashAnnotation]
	if exists {
		want := configHash(cm.Data)
		if has && current == want {
			return ctrl.Result{}, nil
		}
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations[hashAnnotation] = want
	} else {
		if !has {
			return ctrl.Result{}, nil
		}
		delete(d.Spec.Template.Annotations, hashAnnotation)
	}
	return ctrl.Result{}, c.Update(ctx, &d)
}
