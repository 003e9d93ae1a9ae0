package judge

import (
	"math/rand/v2"
	"testing"
	"time"

	"ctrljudge/judge/ctrl"
)

func newTestServer() (*apiServer, *[]watchEvent) {
	var evs []watchEvent
	s := newAPIServer(rand.New(rand.NewPCG(1, 2)), func() time.Time { return epoch })
	s.watch = func(ev watchEvent) { evs = append(evs, ev) }
	return s, &evs
}

func deployment(name string, replicas int32, image string) *ctrl.Deployment {
	d := &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: name, Namespace: "default"}}
	d.Spec.Replicas = replicas
	d.Spec.Template.Spec.Containers = []ctrl.Container{{Name: "app", Image: image}}
	return d
}

func TestCreateAssignsIdentity(t *testing.T) {
	s, evs := newTestServer()
	o, err := s.create(deployment("web", 1, "v1"), false)
	if err != nil {
		t.Fatal(err)
	}
	m := o.GetObjectMeta()
	if m.UID == "" || m.ResourceVersion == "" || m.Generation != 1 || !m.CreationTimestamp.Equal(epoch) {
		t.Fatalf("metadata not set: %+v", m)
	}
	if len(*evs) != 1 || (*evs)[0].Type != evAdded {
		t.Fatalf("events %+v", *evs)
	}
	if _, err := s.create(deployment("web", 1, "v1"), false); err == nil || err.Reason != ctrl.ReasonAlreadyExists {
		t.Fatalf("second create: %v", err)
	}
	s.delete(ctrl.KindDeployment, "default", "web")
	again, _ := s.create(deployment("web", 1, "v1"), false)
	if again.GetObjectMeta().UID == m.UID {
		t.Fatal("a recreated object must get a new UID")
	}
}

func TestGenerateNameGivesUniqueNames(t *testing.T) {
	s, _ := newTestServer()
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-"}}
		o, err := s.create(p, false)
		if err != nil {
			t.Fatal(err)
		}
		n := o.GetObjectMeta().Name
		if seen[n] || len(n) != len("web-")+5 {
			t.Fatalf("name %q", n)
		}
		seen[n] = true
	}
	if _, err := s.create(&ctrl.Pod{}, false); err == nil || err.Reason != ctrl.ReasonInvalid {
		t.Fatalf("a Pod with neither name nor generateName: %v", err)
	}
}

func TestUpdateWithStaleResourceVersionConflicts(t *testing.T) {
	s, _ := newTestServer()
	o, _ := s.create(deployment("web", 1, "v1"), false)
	first := o.(*ctrl.Deployment)
	second := ctrl.DeepCopy(first).(*ctrl.Deployment)
	first.Spec.Replicas = 2
	if _, err := s.update(first, false); err != nil {
		t.Fatal(err)
	}
	second.Spec.Replicas = 3
	_, err := s.update(second, false)
	if err == nil || err.Reason != ctrl.ReasonConflict || err.Code != 409 {
		t.Fatalf("stale update: %v", err)
	}
	if got := s.get(ctrl.KindDeployment, "default", "web").(*ctrl.Deployment).Spec.Replicas; got != 2 {
		t.Fatalf("replicas %d after a refused update", got)
	}
}

func TestGenerationCountsSpecChangesOnly(t *testing.T) {
	s, _ := newTestServer()
	o, _ := s.create(deployment("web", 1, "v1"), false)
	d := o.(*ctrl.Deployment)
	d.Labels = map[string]string{"x": "y"}
	o, _ = s.update(d, false)
	if g := o.GetObjectMeta().Generation; g != 1 {
		t.Fatalf("a label change made generation %d", g)
	}
	d = o.(*ctrl.Deployment)
	d.Status.Replicas = 5
	o, _ = s.update(d, true)
	if g := o.GetObjectMeta().Generation; g != 1 || o.(*ctrl.Deployment).Status.Replicas != 5 {
		t.Fatalf("status write: generation %d, status %+v", g, o.(*ctrl.Deployment).Status)
	}
	d = o.(*ctrl.Deployment)
	d.Spec.Replicas = 4
	d.Status.Replicas = 0 // ignored: status goes through the subresource
	o, _ = s.update(d, false)
	if g := o.GetObjectMeta().Generation; g != 2 || o.(*ctrl.Deployment).Status.Replicas != 5 {
		t.Fatalf("spec write: generation %d, status %+v", g, o.(*ctrl.Deployment).Status)
	}
}

func TestNoOpUpdateKeepsResourceVersion(t *testing.T) {
	s, evs := newTestServer()
	o, _ := s.create(deployment("web", 1, "v1"), false)
	n := len(*evs)
	o2, err := s.update(o, false)
	if err != nil || o2.GetObjectMeta().ResourceVersion != o.GetObjectMeta().ResourceVersion || len(*evs) != n {
		t.Fatalf("no-op update: %v, rv %s→%s, %d events", err, o.GetObjectMeta().ResourceVersion, o2.GetObjectMeta().ResourceVersion, len(*evs)-n)
	}
}

func TestFinalizersDelayDeletion(t *testing.T) {
	s, _ := newTestServer()
	d := deployment("web", 1, "v1")
	d.Finalizers = []string{"example.com/x"}
	s.create(d, false)
	o, err := s.delete(ctrl.KindDeployment, "default", "web")
	if err != nil || o.GetObjectMeta().DeletionTimestamp == nil {
		t.Fatalf("delete with a finalizer: %v %+v", err, o)
	}
	if s.get(ctrl.KindDeployment, "default", "web") == nil {
		t.Fatal("object gone while a finalizer remains")
	}
	cur := s.get(ctrl.KindDeployment, "default", "web")
	ctrl.RemoveFinalizer(cur, "example.com/x")
	if _, err := s.update(cur, false); err != nil {
		t.Fatal(err)
	}
	if s.get(ctrl.KindDeployment, "default", "web") != nil {
		t.Fatal("object kept after its last finalizer went")
	}
	if _, err := s.delete(ctrl.KindDeployment, "default", "web"); err == nil || err.Reason != ctrl.ReasonNotFound {
		t.Fatalf("delete of a missing object: %v", err)
	}
}

func TestOrphansAreFoundForGarbageCollection(t *testing.T) {
	s, _ := newTestServer()
	o, _ := s.create(deployment("web", 1, "v1"), false)
	p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "web-1"}}
	ctrl.SetControllerReference(o, p)
	s.create(p, false)
	s.create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "loose"}}, false)
	if n := len(s.orphans()); n != 0 {
		t.Fatalf("%d orphans while the owner lives", n)
	}
	s.delete(ctrl.KindDeployment, "default", "web")
	orphans := s.orphans()
	if len(orphans) != 1 || orphans[0].GetObjectMeta().Name != "web-1" {
		t.Fatalf("orphans %v", orphans)
	}
}

func TestNoNewFinalizersWhileDeleting(t *testing.T) {
	s, _ := newTestServer()
	d := deployment("web", 1, "v1")
	d.Finalizers = []string{"a"}
	s.create(d, false)
	s.delete(ctrl.KindDeployment, "default", "web")
	cur := s.get(ctrl.KindDeployment, "default", "web")
	ctrl.AddFinalizer(cur, "b")
	if _, err := s.update(cur, false); err == nil || err.Reason != ctrl.ReasonInvalid {
		t.Fatalf("adding a finalizer to a deleting object: %v", err)
	}
}
