package cluster

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
)

func newTestServer() (*APIServer, *[]WatchEvent) {
	var evs []WatchEvent
	s := NewAPIServer(rand.New(rand.NewPCG(1, 2)), func() time.Time { return Epoch })
	s.Watch = func(ev WatchEvent) { evs = append(evs, ev) }
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
	o, err := s.Create(deployment("web", 1, "v1"), false)
	if err != nil {
		t.Fatal(err)
	}
	m := o.GetObjectMeta()
	if m.UID == "" || m.ResourceVersion == "" || m.Generation != 1 || !m.CreationTimestamp.Equal(Epoch) {
		t.Fatalf("metadata not set: %+v", m)
	}
	if len(*evs) != 1 || (*evs)[0].Type != EvAdded {
		t.Fatalf("events %+v", *evs)
	}
	if _, err := s.Create(deployment("web", 1, "v1"), false); err == nil || err.Reason != ctrl.ReasonAlreadyExists {
		t.Fatalf("second create: %v", err)
	}
	s.Delete(ctrl.KindDeployment, "default", "web")
	again, _ := s.Create(deployment("web", 1, "v1"), false)
	if again.GetObjectMeta().UID == m.UID {
		t.Fatal("a recreated object must get a new UID")
	}
}

func TestGenerateNameGivesUniqueNames(t *testing.T) {
	s, _ := newTestServer()
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: "web-"}}
		o, err := s.Create(p, false)
		if err != nil {
			t.Fatal(err)
		}
		n := o.GetObjectMeta().Name
		if seen[n] || len(n) != len("web-")+5 {
			t.Fatalf("name %q", n)
		}
		seen[n] = true
	}
	if _, err := s.Create(&ctrl.Pod{}, false); err == nil || err.Reason != ctrl.ReasonInvalid {
		t.Fatalf("a Pod with neither name nor generateName: %v", err)
	}
}

func TestUpdateWithStaleResourceVersionConflicts(t *testing.T) {
	s, _ := newTestServer()
	o, _ := s.Create(deployment("web", 1, "v1"), false)
	first := o.(*ctrl.Deployment)
	second := ctrl.DeepCopy(first).(*ctrl.Deployment)
	first.Spec.Replicas = 2
	if _, err := s.Update(first, false); err != nil {
		t.Fatal(err)
	}
	second.Spec.Replicas = 3
	_, err := s.Update(second, false)
	if err == nil || err.Reason != ctrl.ReasonConflict || err.Code != 409 {
		t.Fatalf("stale update: %v", err)
	}
	if got := s.Get(ctrl.KindDeployment, "default", "web").(*ctrl.Deployment).Spec.Replicas; got != 2 {
		t.Fatalf("replicas %d after a refused update", got)
	}
}

func TestGenerationCountsSpecChangesOnly(t *testing.T) {
	s, _ := newTestServer()
	o, _ := s.Create(deployment("web", 1, "v1"), false)
	d := o.(*ctrl.Deployment)
	d.Labels = map[string]string{"x": "y"}
	o, _ = s.Update(d, false)
	if g := o.GetObjectMeta().Generation; g != 1 {
		t.Fatalf("a label change made generation %d", g)
	}
	d = o.(*ctrl.Deployment)
	d.Status.Replicas = 5
	o, _ = s.Update(d, true)
	if g := o.GetObjectMeta().Generation; g != 1 || o.(*ctrl.Deployment).Status.Replicas != 5 {
		t.Fatalf("status write: generation %d, status %+v", g, o.(*ctrl.Deployment).Status)
	}
	d = o.(*ctrl.Deployment)
	d.Spec.Replicas = 4
	d.Status.Replicas = 0 // ignored: status goes through the subresource
	o, _ = s.Update(d, false)
	if g := o.GetObjectMeta().Generation; g != 2 || o.(*ctrl.Deployment).Status.Replicas != 5 {
		t.Fatalf("spec write: generation %d, status %+v", g, o.(*ctrl.Deployment).Status)
	}
}

// Every kind with a Status field has the status subresource, the custom
// App as much as Deployment: the server knows no kind by name.
func TestEveryKindWithStatusHasTheSubresource(t *testing.T) {
	s, _ := newTestServer()
	in := &ctrl.App{ObjectMeta: ctrl.ObjectMeta{Name: "chat"}, Spec: ctrl.AppSpec{Image: "vllm:0.6", Replicas: 2},
		Status: ctrl.AppStatus{ObservedGeneration: 7}}
	o, _ := s.Create(in, false)
	if a := o.(*ctrl.App); a.Status.ObservedGeneration != 0 || a.Generation != 1 {
		t.Fatalf("create kept the status or set generation %d: %+v", a.Generation, a.Status)
	}
	a := o.(*ctrl.App)
	a.Status.Conditions = []ctrl.Condition{{Type: "Ready", Status: ctrl.ConditionTrue}}
	a.Spec.Image = "ignored" // a status write stores status only
	o, _ = s.Update(a, true)
	if a := o.(*ctrl.App); a.Generation != 1 || a.Spec.Image != "vllm:0.6" || len(a.Status.Conditions) != 1 {
		t.Fatalf("status write: %+v", a)
	}
	a = o.(*ctrl.App)
	a.Spec.Replicas = 3
	a.Status.Conditions = nil // ignored: an update leaves status alone
	o, _ = s.Update(a, false)
	if a := o.(*ctrl.App); a.Generation != 2 || len(a.Status.Conditions) != 1 {
		t.Fatalf("spec write: generation %d, status %+v", a.Generation, a.Status)
	}
}

func TestNoOpUpdateKeepsResourceVersion(t *testing.T) {
	s, evs := newTestServer()
	o, _ := s.Create(deployment("web", 1, "v1"), false)
	n := len(*evs)
	o2, err := s.Update(o, false)
	if err != nil || o2.GetObjectMeta().ResourceVersion != o.GetObjectMeta().ResourceVersion || len(*evs) != n {
		t.Fatalf("no-op update: %v, rv %s→%s, %d events", err, o.GetObjectMeta().ResourceVersion, o2.GetObjectMeta().ResourceVersion, len(*evs)-n)
	}
}

func TestFinalizersDelayDeletion(t *testing.T) {
	s, _ := newTestServer()
	d := deployment("web", 1, "v1")
	d.Finalizers = []string{"example.com/x"}
	s.Create(d, false)
	o, err := s.Delete(ctrl.KindDeployment, "default", "web")
	if err != nil || o.GetObjectMeta().DeletionTimestamp == nil {
		t.Fatalf("delete with a finalizer: %v %+v", err, o)
	}
	if s.Get(ctrl.KindDeployment, "default", "web") == nil {
		t.Fatal("object gone while a finalizer remains")
	}
	cur := s.Get(ctrl.KindDeployment, "default", "web")
	ctrl.RemoveFinalizer(cur, "example.com/x")
	if _, err := s.Update(cur, false); err != nil {
		t.Fatal(err)
	}
	if s.Get(ctrl.KindDeployment, "default", "web") != nil {
		t.Fatal("object kept after its last finalizer went")
	}
	if _, err := s.Delete(ctrl.KindDeployment, "default", "web"); err == nil || err.Reason != ctrl.ReasonNotFound {
		t.Fatalf("delete of a missing object: %v", err)
	}
}

func TestOrphansAreFoundForGarbageCollection(t *testing.T) {
	s, _ := newTestServer()
	o, _ := s.Create(deployment("web", 1, "v1"), false)
	p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "web-1"}}
	ctrl.SetControllerReference(o, p)
	s.Create(p, false)
	s.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: "loose"}}, false)
	if n := len(s.orphans()); n != 0 {
		t.Fatalf("%d orphans while the owner lives", n)
	}
	s.Delete(ctrl.KindDeployment, "default", "web")
	orphans := s.orphans()
	if len(orphans) != 1 || orphans[0].GetObjectMeta().Name != "web-1" {
		t.Fatalf("orphans %v", orphans)
	}
}

func TestNoNewFinalizersWhileDeleting(t *testing.T) {
	s, _ := newTestServer()
	d := deployment("web", 1, "v1")
	d.Finalizers = []string{"a"}
	s.Create(d, false)
	s.Delete(ctrl.KindDeployment, "default", "web")
	cur := s.Get(ctrl.KindDeployment, "default", "web")
	ctrl.AddFinalizer(cur, "b")
	if _, err := s.Update(cur, false); err == nil || err.Reason != ctrl.ReasonInvalid {
		t.Fatalf("adding a finalizer to a deleting object: %v", err)
	}
}

func configMap(name string, data map[string]string) *ctrl.ConfigMap {
	return &ctrl.ConfigMap{ObjectMeta: ctrl.ObjectMeta{Name: name}, Data: data}
}

// The server refuses names, labels and annotations the real one refuses,
// with 422 Invalid, and quotes the learner's value clipped.
func TestInvalidMetadataIsRefused(t *testing.T) {
	long := strings.Repeat("a", 64)
	huge := strings.Repeat("x", 1<<20)
	cases := []struct {
		name string
		meta ctrl.ObjectMeta
		want string
	}{
		{"upper case", ctrl.ObjectMeta{Name: "Web"}, "metadata.name: a name must be"},
		{"leading dot", ctrl.ObjectMeta{Name: ".web"}, "metadata.name"},
		{"double dot", ctrl.ObjectMeta{Name: "a..b"}, "metadata.name"},
		{"dash before dot", ctrl.ObjectMeta{Name: "a-.b"}, "metadata.name"},
		{"too long", ctrl.ObjectMeta{Name: strings.Repeat("a", 254)}, "no more than 253 characters"},
		{"huge", ctrl.ObjectMeta{Name: huge}, "bytes cut"},
		{"generateName", ctrl.ObjectMeta{GenerateName: "Web-"}, "metadata.generateName"},
		{"namespace", ctrl.ObjectMeta{Name: "a", Namespace: "a.b"}, "metadata.namespace"},
		{"label value too long", ctrl.ObjectMeta{Name: "a", Labels: map[string]string{"k": long}}, "no more than 63"},
		{"label value syntax", ctrl.ObjectMeta{Name: "a", Labels: map[string]string{"k": "-x"}}, `Invalid value "-x" for key "k"`},
		{"label key syntax", ctrl.ObjectMeta{Name: "a", Labels: map[string]string{"a b": "x"}}, `Invalid key "a b"`},
		{"label key name too long", ctrl.ObjectMeta{Name: "a", Labels: map[string]string{"example.com/" + long: "x"}}, "no more than 63"},
		{"label key prefix", ctrl.ObjectMeta{Name: "a", Labels: map[string]string{"Example.com/x": "x"}}, "the prefix before '/'"},
		{"empty label key", ctrl.ObjectMeta{Name: "a", Labels: map[string]string{"": "x"}}, "must not be empty"},
		{"annotation key", ctrl.ObjectMeta{Name: "a", Annotations: map[string]string{"/x": "y"}}, "metadata.annotations"},
		{"annotations too large", ctrl.ObjectMeta{Name: "a", Annotations: map[string]string{"a": strings.Repeat("v", 256<<10)}}, "at most 262144 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, evs := newTestServer()
			_, err := s.Create(&ctrl.ConfigMap{ObjectMeta: c.meta}, false)
			if err == nil || err.Code != 422 || err.Reason != ctrl.ReasonInvalid || !strings.Contains(err.Message, c.want) {
				t.Fatalf("got %v, want 422 Invalid saying %q", err, c.want)
			}
			if len(err.Message) > 2<<10 || len(*evs) != 0 || len(s.Objs) != 0 || s.uids != 0 || s.rv != 0 {
				t.Fatalf("message of %d bytes, %d events, %d objects, uid %d, rv %d", len(err.Message), len(*evs), len(s.Objs), s.uids, s.rv)
			}
		})
	}
	// What the real server accepts, this one does too.
	s, _ := newTestServer()
	ok := &ctrl.ConfigMap{ObjectMeta: ctrl.ObjectMeta{Name: "web.v1-2", Labels: map[string]string{
		"app": "web", "example.com/tier": "Front_end.1", "empty": "", "k": strings.Repeat("v", 63)},
		Annotations: map[string]string{"Example.com/Note": strings.Repeat("n", 200<<10)}}}
	if _, err := s.Create(ok, false); err != nil {
		t.Fatal(err)
	}
	// An update is checked too.
	cur := s.Get(ctrl.KindConfigMap, "default", "web.v1-2")
	cur.GetObjectMeta().Labels["bad key"] = "x"
	if _, err := s.Update(cur, false); err == nil || err.Reason != ctrl.ReasonInvalid {
		t.Fatalf("update with a bad label key: %v", err)
	}
	// A long generateName is cut to 58 characters, as Kubernetes does.
	o, err := s.Create(&ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{GenerateName: strings.Repeat("p", 100) + "-"}}, false)
	if err != nil || len(o.GetObjectMeta().Name) != 63 {
		t.Fatalf("long generateName: %v %q", err, o.GetObjectMeta().Name)
	}
}

// An object over 1.5 MiB is refused with 413; the store stays as it was.
func TestObjectSizeIsLimited(t *testing.T) {
	s, evs := newTestServer()
	big := configMap("big", map[string]string{"k": strings.Repeat("x", maxObjectBytes)})
	_, err := s.Create(big, false)
	if err == nil || err.Code != 413 || err.Reason != ctrl.ReasonRequestEntityTooLarge || !strings.Contains(err.Message, `ConfigMap "big" is too large: 1.50 MiB`) {
		t.Fatalf("create of a 1.5 MiB ConfigMap: %v", err)
	}
	if len(*evs) != 0 || s.bytes != 0 || s.rv != 0 {
		t.Fatalf("a refused create left %d events, %d bytes, rv %d", len(*evs), s.bytes, s.rv)
	}
	o, err := s.Create(configMap("cm", map[string]string{"k": "small"}), false)
	if err != nil {
		t.Fatal(err)
	}
	before := s.bytes
	o.(*ctrl.ConfigMap).Data["k"] = strings.Repeat("x", 2<<20)
	_, err = s.Update(o, false)
	if err == nil || err.Code != 413 {
		t.Fatalf("update to 2 MiB: %v", err)
	}
	if s.bytes != before || s.Get(ctrl.KindConfigMap, "default", "cm").(*ctrl.ConfigMap).Data["k"] != "small" {
		t.Fatal("a refused update changed the store")
	}
	if !ctrl.IsRequestEntityTooLarge(err) {
		t.Fatal("IsRequestEntityTooLarge does not recognise the error")
	}
}

// A test's cluster holds at most maxObjects objects and maxStoredBytes of
// them; past either, writes fail with 403 "exceeded quota", and deleting
// makes room again.
func TestQuotaOnObjects(t *testing.T) {
	s, _ := newTestServer()
	for i := 0; i < maxObjects; i++ {
		if _, err := s.Create(configMap("cm-"+strconv.Itoa(i), nil), false); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
	}
	_, err := s.Create(configMap("one-more", nil), false)
	if err == nil || err.Code != 403 || !ctrl.IsForbidden(err) || !strings.Contains(err.Message, "exceeded quota") {
		t.Fatalf("object %d: %v", maxObjects+1, err)
	}
	// Updating an existing object is still allowed at the count limit.
	cur := s.Get(ctrl.KindConfigMap, "default", "cm-0")
	cur.GetObjectMeta().Labels = map[string]string{"a": "b"}
	if _, err := s.Update(cur, false); err != nil {
		t.Fatal(err)
	}
	s.Delete(ctrl.KindConfigMap, "default", "cm-0")
	if _, err := s.Create(configMap("one-more", nil), false); err != nil {
		t.Fatalf("after a delete: %v", err)
	}

	s, _ = newTestServer()
	mb := strings.Repeat("x", 1<<20)
	for i := 0; i < 2; i++ {
		if _, err := s.Create(configMap("mb-"+strconv.Itoa(i), map[string]string{"k": mb}), false); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.Create(configMap("mb-2", map[string]string{"k": mb}), false)
	if err == nil || err.Code != 403 || !strings.Contains(err.Message, "holds at most 3,145,728 (3.00 MiB)") {
		t.Fatalf("a third MiB: %v", err)
	}
	sum := 0
	for _, key := range s.SortedKeys() {
		sum += objSize(s.Objs[key])
	}
	if sum != s.bytes {
		t.Fatalf("stored bytes %d, accounted %d", sum, s.bytes)
	}
	s.Delete(ctrl.KindConfigMap, "default", "mb-0")
	if _, err := s.Create(configMap("mb-2", map[string]string{"k": mb}), false); err != nil || len(s.size) != len(s.Objs) {
		t.Fatalf("after a delete: %v", err)
	}
}

func TestClipCutsOnARuneBoundary(t *testing.T) {
	if got := text.Clip("short", 10); got != "short" {
		t.Fatal(got)
	}
	got := text.Clip(strings.Repeat("é", 10), 5) // 2 bytes each
	if got != "éé… (16 bytes cut)" {
		t.Fatalf("%q", got)
	}
	if got := text.Clip(strings.Repeat("E", 1<<20), 256); len(got) > 300 || !strings.HasSuffix(got, "E… (1048320 bytes cut)") {
		t.Fatalf("%q", got[len(got)-40:])
	}
}
