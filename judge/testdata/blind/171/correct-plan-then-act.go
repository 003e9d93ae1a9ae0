// correct: pure decide() returns an action value, a separate apply() performs the single write; copies template annotations too
package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

type actionKind int

const (
	doNothing actionKind = iota
	doCreate
	doDelete
)

type action struct {
	kind   actionKind
	victim *ctrl.Pod
	why    string
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{}
	err := c.Get(ctx, req.NamespacedName, d)
	switch {
	case ctrl.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	case d.DeletionTimestamp != nil:
		return ctrl.Result{}, nil
	}

	pods := &ctrl.PodList{}
	if err := c.List(ctx, pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(d)); err != nil {
		return ctrl.Result{}, err
	}

	a := decide(d, pods.Items)
	if a.kind != doNothing {
		ctrl.Log(req.String(), a.why)
	}
	return ctrl.Result{}, apply(ctx, c, d, a)
}

// decide applies rules 2 to 4 to the listed Pods (sorted by name).
func decide(d *ctrl.Deployment, items []ctrl.Pod) action {
	live := make([]*ctrl.Pod, 0, len(items))
	for i := range items {
		p := &items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		live = append(live, p)
	}
	for _, p := range live {
		if p.Status.Phase == ctrl.PodFailed {
			return action{kind: doDelete, victim: p, why: "delete failed pod"}
		}
	}

	want := ctrl.PodImage(&d.Spec.Template.Spec)
	var total, available int32
	var firstOld *ctrl.Pod
	for _, p := range live {
		total++
		if ctrl.PodImage(&p.Spec) == want {
			if ctrl.IsPodReady(p) {
				available++
			}
		} else if firstOld == nil {
			firstOld = p
		}
	}

	r := d.Spec.Replicas
	ru := d.Spec.Strategy.RollingUpdate
	if available < r-ru.MaxUnavailable && total < r+ru.MaxSurge {
		return action{kind: doCreate, why: "surge"}
	}
	if firstOld != nil && total >= r {
		return action{kind: doDelete, victim: firstOld, why: "replace old pod"}
	}
	if total < r {
		return action{kind: doCreate, why: "scale up"}
	}
	if total > r {
		if firstOld != nil {
			return action{kind: doDelete, victim: firstOld, why: "scale down old"}
		}
		return action{kind: doDelete, victim: live[len(live)-1], why: "scale down"}
	}
	return action{kind: doNothing}
}

func apply(ctx context.Context, c ctrl.Client, d *ctrl.Deployment, a action) error {
	switch a.kind {
	case doCreate:
		return c.Create(ctx, newPod(d))
	case doDelete:
		err := c.Delete(ctx, a.victim)
		if ctrl.IsNotFound(err) {
			return nil // already gone: counts as done
		}
		return err
	}
	return nil
}

func newPod(d *ctrl.Deployment) *ctrl.Pod {
	t := &d.Spec.Template
	p := &ctrl.Pod{}
	p.GenerateName = d.Name + "-"
	p.Namespace = d.Namespace
	if t.Labels != nil {
		p.Labels = make(map[string]string, len(t.Labels))
		for k, v := range t.Labels {
			p.Labels[k] = v
		}
	}
	if t.Annotations != nil {
		p.Annotations = make(map[string]string, len(t.Annotations))
		for k, v := range t.Annotations {
			p.Annotations[k] = v
		}
	}
	p.Spec.NodeName = t.Spec.NodeName
	p.Spec.Containers = make([]ctrl.Container, len(t.Spec.Containers))
	copy(p.Spec.Containers, t.Spec.Containers)
	ctrl.SetControllerReference(d, p)
	return p
}
