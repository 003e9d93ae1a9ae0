// bug: any error reading the ConfigMap is treated as "the ConfigMap does not exist"
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	"ctrljudge/judge/ctrl"
)

const (
	annConfig = "ctrljudge.dev/config"
	annHash   = "ctrljudge.dev/config-hash"
)

func hashData(data map[string]string) string {
	var buf []byte
	for _, k := range slices.Sorted(maps.Keys(data)) {
		buf = append(buf, k...)
		buf = append(buf, '=')
		buf = append(buf, data[k]...)
		buf = append(buf, '\n')
	}
	sum := sha256.Sum256(buf)
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
	cmName, ok := d.Annotations[annConfig]
	if !ok || cmName == "" {
		return ctrl.Result{}, nil
	}
	var cm ctrl.ConfigMap
	var want *string
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: req.Namespace, Name: cmName}, &cm); err == nil {
		h := hashData(cm.Data)
		want = &h
	}

	cur, has := d.Spec.Template.Annotations[annHash]
	switch {
	case want == nil && !has:
		return ctrl.Result{}, nil
	case want != nil && has && cur == *want:
		return ctrl.Result{}, nil
	case want == nil:
		delete(d.Spec.Template.Annotations, annHash)
	default:
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations[annHash] = *want
	}
	return ctrl.Result{}, c.Update(ctx, &d)
}
