// bug: writes each entry as "key: value" instead of "key=value", so the hash differs from the one the statement defines
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	cmName := d.Annotations["ctrljudge.dev/config"]
	if cmName == "" {
		return ctrl.Result{}, nil
	}
	var cm ctrl.ConfigMap
	if err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: cmName}, &cm); err != nil {
		if !ctrl.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if _, ok := d.Spec.Template.Annotations["ctrljudge.dev/config-hash"]; !ok {
			return ctrl.Result{}, nil
		}
		delete(d.Spec.Template.Annotations, "ctrljudge.dev/config-hash")
		return ctrl.Result{}, c.Update(ctx, &d)
	}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k + ": " + cm.Data[k] + "\n"))
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if d.Spec.Template.Annotations["ctrljudge.dev/config-hash"] == sum {
		return ctrl.Result{}, nil
	}
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations["ctrljudge.dev/config-hash"] = sum
	return ctrl.Result{}, c.Update(ctx, &d)
}
