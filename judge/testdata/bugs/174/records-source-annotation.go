// bug: also records which ConfigMap it hashed in a template annotation of its own, changing more than the config-hash (rule 4: change nothing else)
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

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
	src := d.Annotations["ctrljudge.dev/config"]
	if src == "" {
		return ctrl.Result{}, nil
	}
	ann := d.Spec.Template.Annotations
	var cm ctrl.ConfigMap
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: src}, &cm)
	if ctrl.IsNotFound(err) {
		if _, ok := ann["ctrljudge.dev/config-hash"]; !ok {
			return ctrl.Result{}, nil
		}
		delete(ann, "ctrljudge.dev/config-hash")
		delete(ann, "ctrljudge.dev/config-source")
		return ctrl.Result{}, c.Update(ctx, &d)
	} else if err != nil {
		return ctrl.Result{}, err
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		h.Write([]byte(k + "=" + cm.Data[k] + "\n"))
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if ann["ctrljudge.dev/config-hash"] == sum {
		return ctrl.Result{}, nil
	}
	if ann == nil {
		ann = map[string]string{}
		d.Spec.Template.Annotations = ann
	}
	ann["ctrljudge.dev/config-hash"] = sum
	ann["ctrljudge.dev/config-source"] = src // handy when debugging a rollout
	return ctrl.Result{}, c.Update(ctx, &d)
}
