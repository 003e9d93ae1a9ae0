// correct: builds the hashed text with strings.Builder after sort.Strings, and writes only on a difference
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"ctrljudge/judge/ctrl"
)

func configHash(cm *ctrl.ConfigMap) string {
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		sb.WriteString(k)
		sb.WriteString("=")
		sb.WriteString(cm.Data[k])
		sb.WriteString("\n")
	}
	h := sha256.New()
	h.Write([]byte(sb.String()))
	return hex.EncodeToString(h.Sum(nil))
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{}
	err := c.Get(ctx, req.NamespacedName, d)
	if ctrl.IsNotFound(err) {
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	name := d.GetObjectMeta().Annotations["ctrljudge.dev/config"]
	if name == "" {
		return ctrl.Result{}, nil
	}
	tmpl := &d.Spec.Template.ObjectMeta
	old, had := tmpl.Annotations["ctrljudge.dev/config-hash"]

	cm := &ctrl.ConfigMap{}
	err = c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, cm)
	switch {
	case ctrl.IsNotFound(err):
		if !had {
			return ctrl.Result{}, nil
		}
		delete(tmpl.Annotations, "ctrljudge.dev/config-hash")
		ctrl.Log(d.Name + ": config " + name + " is gone, hash removed")
	case err != nil:
		return ctrl.Result{}, err
	default:
		h := configHash(cm)
		if had && old == h {
			return ctrl.Result{}, nil
		}
		if tmpl.Annotations == nil {
			tmpl.Annotations = make(map[string]string, 1)
		}
		tmpl.Annotations["ctrljudge.dev/config-hash"] = h
		ctrl.Log(d.Name + ": hash " + h[:8])
	}
	return ctrl.Result{}, c.Update(ctx, d)
}
