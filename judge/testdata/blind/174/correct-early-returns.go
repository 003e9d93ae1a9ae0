// correct: one early return per case (missing ConfigMap vs present), io.WriteString into the hasher, fmt %x for hex
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sort"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	const (
		configAnn = "ctrljudge.dev/config"
		hashAnn   = "ctrljudge.dev/config-hash"
	)

	dep := &ctrl.Deployment{}
	if err := c.Get(ctx, req.NamespacedName, dep); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	cmName := dep.Annotations[configAnn]
	if cmName == "" {
		return ctrl.Result{}, nil
	}

	cm := &ctrl.ConfigMap{}
	err := c.Get(ctx, ctrl.ObjectKey{Namespace: dep.Namespace, Name: cmName}, cm)
	if err != nil && !ctrl.IsNotFound(err) {
		return ctrl.Result{}, err
	}

	if ctrl.IsNotFound(err) {
		// No ConfigMap: the template must carry no hash.
		if _, present := dep.Spec.Template.Annotations[hashAnn]; !present {
			return ctrl.Result{}, nil
		}
		delete(dep.Spec.Template.Annotations, hashAnn)
		return ctrl.Result{}, c.Update(ctx, dep)
	}

	keys := make(sort.StringSlice, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	keys.Sort()
	h := sha256.New()
	for _, k := range keys {
		io.WriteString(h, k+"="+cm.Data[k]+"\n")
	}
	sum := fmt.Sprintf("%x", h.Sum(nil))

	if cur, present := dep.Spec.Template.Annotations[hashAnn]; present && cur == sum {
		return ctrl.Result{}, nil
	}
	if dep.Spec.Template.Annotations == nil {
		dep.Spec.Template.Annotations = make(map[string]string, 1)
	}
	dep.Spec.Template.Annotations[hashAnn] = sum
	return ctrl.Result{}, c.Update(ctx, dep)
}
