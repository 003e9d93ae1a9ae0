package cluster

import (
	"testing"

	"ctrljudge/judge/ctrl"
)

// informerWith is an informer fed by a test server, as the sim wires it;
// byController says whose writes the next events are.
func informerWith() (*APIServer, *Informer, *bool) {
	api, _ := newTestServer()
	in := NewInformer()
	byController := new(bool)
	api.Watch = func(ev WatchEvent) { in.Observe(ev, *byController) }
	return api, in, byController
}

func delivered(in *Informer) []string {
	var keys []string
	in.Deliver(func(ev WatchEvent) { keys = append(keys, string(ev.Type)+" "+ev.Object.GetObjectMeta().Name) })
	return keys
}

func cached(in *Informer, name string) ctrl.Object {
	return in.Get(ctrl.Call{Kind: ctrl.KindDeployment, Key: ctrl.NamespacedName{Name: name}}).Object
}

func TestInformerShowsWritesOnlyOnceDelivered(t *testing.T) {
	api, in, _ := informerWith()
	api.Create(deployment("web", 1, "v1"), false)
	if cached(in, "web") != nil {
		t.Fatal("the cache shows an event not yet delivered")
	}
	if got := join(delivered(in)); got != "ADDED web" {
		t.Fatalf("delivered %q", got)
	}
	if cached(in, "web") == nil {
		t.Fatal("the cache misses a delivered object")
	}
	api.Delete(ctrl.KindDeployment, "default", "web")
	delivered(in)
	if r := in.Get(ctrl.Call{Kind: ctrl.KindDeployment, Key: ctrl.NamespacedName{Name: "web"}}); r.Err == nil || r.Err.Reason != ctrl.ReasonNotFound {
		t.Fatalf("a deleted object reads as %+v", r)
	}
}

func TestInformerHoldsOwnWritesUntilTheReconcileEnds(t *testing.T) {
	api, in, byController := informerWith()
	*byController = true
	api.Create(deployment("web", 1, "v1"), false)
	*byController = false
	if got := delivered(in); len(got) != 0 {
		t.Fatalf("the controller's own write was delivered mid-reconcile: %v", got)
	}
	if in.Reconciled(func() bool { return false }) {
		t.Fatal("reported a stale read that was not asked for")
	}
	if got := join(delivered(in)); got != "ADDED web" {
		t.Fatalf("after the reconcile delivered %q", got)
	}
}

func TestInformerStaleReadKeepsEachObjectsOrder(t *testing.T) {
	api, in, byController := informerWith()
	*byController = true
	web, _ := api.Create(deployment("web", 1, "v1"), false)
	*byController = false
	asked := 0
	if !in.Reconciled(func() bool { asked++; return true }) || asked != 1 {
		t.Fatal("the stale read was not applied")
	}
	// A later change to the held object waits behind it; another object's
	// does not.
	next := ctrl.DeepCopy(web).(*ctrl.Deployment)
	next.Spec.Replicas = 2
	api.Update(next, false)
	api.Create(deployment("db", 1, "v1"), false)
	if got := join(delivered(in)); got != "ADDED db" || !in.Holding() {
		t.Fatalf("while held delivered %q (holding %v)", got, in.Holding())
	}
	in.Release()
	if got := join(delivered(in)); got != "ADDED web MODIFIED web" {
		t.Fatalf("released %q", got)
	}
	if cached(in, "web").(*ctrl.Deployment).Spec.Replicas != 2 {
		t.Fatal("the cache did not end on the latest state")
	}
	// Nothing written: the stale-read fault has no opportunity.
	if in.Reconciled(func() bool { t.Fatal("asked with no writes"); return true }) {
		t.Fatal("held nothing, yet reported a stale read")
	}
}

func TestInformerCrashKeepsWhatWasWritten(t *testing.T) {
	api, in, byController := informerWith()
	*byController = true
	api.Create(deployment("web", 1, "v1"), false)
	in.Crashed()
	if got := join(delivered(in)); got != "ADDED web" {
		t.Fatalf("after a crash delivered %q", got)
	}
}

func TestInformerResyncListsTheServer(t *testing.T) {
	api, in, _ := informerWith()
	api.Create(deployment("b", 1, "v1"), false)
	api.Create(deployment("a", 1, "v1"), false)
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "p", Namespace: "default"}}, false)
	in.Resync(api)
	if got := delivered(in); len(got) != 0 {
		t.Fatalf("events from before the resync were delivered: %v", got)
	}
	items := in.List(ctrl.Call{Kind: ctrl.KindDeployment}).Items
	if len(items) != 2 || items[0].GetObjectMeta().Name != "a" || items[1].GetObjectMeta().Name != "b" {
		t.Fatalf("list %v, want a and b in key order", items)
	}
	// The cache holds copies: the server's objects stay the server's.
	items[0].GetObjectMeta().Name = "changed"
	if api.Get(ctrl.KindDeployment, "default", "a") == nil {
		t.Fatal("the cache shares objects with the server")
	}
}

func TestInformerListFilters(t *testing.T) {
	api, in, _ := informerWith()
	web, _ := api.Create(deployment("web", 1, "v1"), false)
	mine := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "mine", Namespace: "default", Labels: map[string]string{"app": "web"}}}
	ctrl.SetControllerReference(web, mine)
	api.Create(mine, false)
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "other", Namespace: "default", Labels: map[string]string{"app": "db"}}}, false)
	api.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "elsewhere", Namespace: "kube-system", Labels: map[string]string{"app": "web"}}}, false)
	delivered(in)
	names := func(c ctrl.Call) string {
		c.Kind = ctrl.KindPod
		var n []string
		for _, o := range in.List(c).Items {
			n = append(n, o.GetObjectMeta().Name)
		}
		return join(n)
	}
	for _, c := range []struct {
		call ctrl.Call
		want string
	}{
		{ctrl.Call{}, "mine other elsewhere"}, // by namespace, then name
		{ctrl.Call{Namespace: "default"}, "mine other"},
		{ctrl.Call{Labels: map[string]string{"app": "web"}}, "mine elsewhere"},
		{ctrl.Call{OwnerUID: web.GetObjectMeta().UID}, "mine"},
	} {
		if got := names(c.call); got != c.want {
			t.Errorf("%+v: %q, want %q", c.call, got, c.want)
		}
	}
}
