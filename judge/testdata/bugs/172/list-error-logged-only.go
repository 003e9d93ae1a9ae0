// bug: a failed List is logged and the call ends without an error
package main

import (
	"context"
	"strconv"

	"ctrljudge/judge/ctrl"
)

func counts(p *ctrl.Pod) bool { return p.DeletionTimestamp == nil && p.Status.Phase != ctrl.PodFailed }

func count(pods []*ctrl.Pod, ok func(*ctrl.Pod) bool) int32 {
	var n int32
	for _, p := range pods {
		if ok(p) {
			n++
		}
	}
	return n
}

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := new(ctrl.Deployment)
	if err := c.Get(ctx, req.NamespacedName, d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	list := new(ctrl.PodList)
	if err := c.List(ctx, list, ctrl.InNamespace(d.Namespace), ctrl.OwnedBy(d)); err != nil {
		ctrl.Log("could not list pods:", err.Error())
		return ctrl.Result{}, nil
	}
	var pods []*ctrl.Pod
	for i := range list.Items {
		if counts(&list.Items[i]) {
			pods = append(pods, &list.Items[i])
		}
	}
	image := ctrl.PodImage(&d.Spec.Template.Spec)
	updated := func(p *ctrl.Pod) bool { return ctrl.PodImage(&p.Spec) == image }
	want := ctrl.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           int32(len(pods)),
		UpdatedReplicas:    count(pods, updated),
		ReadyReplicas:      count(pods, ctrl.IsPodReady),
		AvailableReplicas:  count(pods, func(p *ctrl.Pod) bool { return updated(p) && ctrl.IsPodReady(p) }),
	}
	if want == d.Status {
		return ctrl.Result{}, nil
	}
	d.Status = want
	if err := c.UpdateStatus(ctx, d); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.Log(d.Name, "generation", strconv.FormatInt(d.Generation, 10), "replicas", strconv.Itoa(len(pods)))
	return ctrl.Result{}, nil
}
