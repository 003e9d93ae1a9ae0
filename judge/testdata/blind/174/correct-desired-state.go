// correct: computes the desired annotation as (value, present), compares, then writes a cloned map; slices.Sorted + strings.Builder + Sum256
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"ctrljudge/judge/ctrl"
)

const (
	cfgKey  = "ctrljudge.dev/config"
	hashKey = "ctrljudge.dev/config-hash"
)

func hashData(data map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(data)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(data[k])
		b.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// desired returns the config-hash the template should carry, and whether
// it should carry one at all.
func desired(ctx context.Context, c ctrl.Client, ns, name string) (string, bool, error) {
	var cm ctrl.ConfigMap
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: ns, Name: name}, &cm)
	if ctrl.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return hashData(cm.Data), true, nil
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	err := c.Get(ctx, req.NamespacedName, &d)
	if ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	cmName, ok := d.Annotations[cfgKey]
	if !ok || cmName == "" {
		return ctrl.Result{}, nil
	}

	want, wantPresent, err := desired(ctx, c, d.Namespace, cmName)
	if err != nil {
		return ctrl.Result{}, err
	}
	got, gotPresent := d.Spec.Template.Annotations[hashKey]
	if wantPresent == gotPresent && want == got {
		return ctrl.Result{}, nil
	}

	ann := maps.Clone(d.Spec.Template.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	if wantPresent {
		ann[hashKey] = want
		ctrl.Log(req.String(), "config-hash", want[:8])
	} else {
		delete(ann, hashKey)
		ctrl.Log(req.String(), "config-hash removed")
	}
	d.Spec.Template.Annotations = ann
	if err := c.Update(ctx, &d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
