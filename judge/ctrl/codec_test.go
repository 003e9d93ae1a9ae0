package ctrl

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sampleObjects() []Object {
	ts := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	return []Object{
		&Deployment{
			ObjectMeta: ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "7", Generation: 3,
				CreationTimestamp: ts, DeletionTimestamp: &ts, Labels: map[string]string{"app": "web", "tier": "front"},
				Annotations: map[string]string{}, Finalizers: []string{"example.com/cleanup"}},
			Spec: DeploymentSpec{Replicas: -3, Selector: LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: PodTemplateSpec{ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: PodSpec{Containers: []Container{{Name: "c", Image: "web:v2"}}}},
				Strategy: DeploymentStrategy{Type: "RollingUpdate", RollingUpdate: RollingUpdateDeployment{MaxSurge: 1, MaxUnavailable: 2}}},
			Status: DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2},
		},
		&Pod{
			ObjectMeta: ObjectMeta{GenerateName: "web-", OwnerReferences: []OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-1", Controller: true, BlockOwnerDeletion: true}}},
			Spec:       PodSpec{Containers: []Container{{Name: "c", Image: "ünïcode"}}, NodeName: "node-1"},
			Status:     PodStatus{Phase: PodRunning, Conditions: []PodCondition{{Type: PodReady, Status: ConditionTrue}}},
		},
		&ConfigMap{ObjectMeta: ObjectMeta{Name: "cfg"}, Data: map[string]string{"a": "", "": "b"}},
		&Pod{},
		&App{
			ObjectMeta: ObjectMeta{Name: "chat", Namespace: "shop", Generation: 2},
			Spec:       AppSpec{Image: "vllm:0.6", Replicas: 2},
			Status: AppStatus{ObservedGeneration: 2, Conditions: []Condition{
				{Type: "Ready", Status: ConditionFalse, ObservedGeneration: 2, LastTransitionTime: ts, Reason: "ResourceExists", Message: "taken"},
				{Type: "Scraped", Status: ConditionUnknown}}},
		},
	}
}

func TestObjectRoundTrip(t *testing.T) {
	for _, o := range sampleObjects() {
		b := AppendObject(nil, o)
		got, err := DecodeObject(b)
		if err != nil {
			t.Fatalf("%T: %v", o, err)
		}
		if again := AppendObject(nil, got); !bytes.Equal(again, b) {
			t.Errorf("%T: re-encoding differs:\n%q\n%q", o, b, again)
		}
		if got.GetObjectKind() != o.GetObjectKind() || got.GetObjectMeta().Name != o.GetObjectMeta().Name {
			t.Errorf("%T: decoded %+v", o, got)
		}
	}
}

// Lengths past one byte take the long form (0xFF and three bytes): at
// the edge, well past it, for strings, slices and maps; and a string too
// long for three bytes is cut, so that what is encoded still decodes.
func TestLongLengthsRoundTrip(t *testing.T) {
	for _, n := range []int{0xFE, 0xFF, 0x100, 70000, maxLength} {
		cm := &ConfigMap{ObjectMeta: ObjectMeta{Name: "cfg", Finalizers: make([]string, n%1000)},
			Data: map[string]string{"k": strings.Repeat("x", n)}}
		for i := range n % 300 {
			cm.Data[strconv.Itoa(i)] = ""
		}
		got, err := DecodeObject(AppendObject(nil, cm))
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		g := got.(*ConfigMap)
		if len(g.Data["k"]) != n || len(g.Data) != len(cm.Data) || len(g.Finalizers) != len(cm.Finalizers) {
			t.Errorf("%d: got a value of %d bytes, %d entries, %d finalizers", n, len(g.Data["k"]), len(g.Data), len(g.Finalizers))
		}
	}
	cm := &ConfigMap{ObjectMeta: ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": strings.Repeat("x", maxLength+5)}}
	got, err := DecodeObject(AppendObject(nil, cm))
	if err != nil || len(got.(*ConfigMap).Data["k"]) != maxLength {
		t.Errorf("a string past maxLength: %v, want it cut to %d bytes", err, maxLength)
	}
}

// Map order must never reach the wire: equal maps encode equally.
func TestMapEncodingIsDeterministic(t *testing.T) {
	m := map[string]string{}
	for _, k := range []string{"z", "a", "m", "q", "b", "y", "c"} {
		m[k] = k
	}
	first := AppendObject(nil, &ConfigMap{Data: m})
	for i := 0; i < 50; i++ {
		c := map[string]string{}
		for k, v := range m {
			c[k] = v
		}
		if !bytes.Equal(first, AppendObject(nil, &ConfigMap{Data: c})) {
			t.Fatal("encoding depends on map iteration order")
		}
	}
}

func TestNilAndEmptyMapsStayDistinct(t *testing.T) {
	for _, m := range []map[string]string{nil, {}} {
		o, err := DecodeObject(AppendObject(nil, &ConfigMap{Data: m}))
		if err != nil {
			t.Fatal(err)
		}
		if got := o.(*ConfigMap).Data; (got == nil) != (m == nil) {
			t.Errorf("Data %#v came back as %#v", m, got)
		}
	}
}

func TestDecodeRejectsTruncatedAndTrailingInput(t *testing.T) {
	b := AppendObject(nil, sampleObjects()[0])
	for i := 0; i < len(b); i++ {
		if _, err := DecodeObject(b[:i]); err == nil {
			t.Fatalf("a %d-byte prefix of a %d-byte object decoded", i, len(b))
		}
	}
	if _, err := DecodeObject(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
	if _, err := DecodeObject(append([]byte{4}, "Node"...)); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

func TestCallsRoundTrip(t *testing.T) {
	calls := []Call{
		{Op: OpGet, Kind: KindPod, Key: ObjectKey{Namespace: "ns", Name: "p"}},
		{Op: OpList, Kind: KindPod, Namespace: "ns", Labels: map[string]string{"app": "web"}, OwnerUID: "u"},
		{Op: OpCreate, Object: sampleObjects()[1]},
		{Op: OpDelete, Kind: KindDeployment, Key: ObjectKey{Name: "web"}},
		{Op: OpLog, Text: "hello"},
		{Op: OpResult, RequeueAfter: 3 * time.Second, HasError: true, Text: "boom", ErrorReason: ReasonConflict},
	}
	for _, c := range calls {
		got, err := DecodeCall(c.Op, appendCall(nil, &c))
		if err != nil {
			t.Fatalf("op %d: %v", c.Op, err)
		}
		if !bytes.Equal(appendCall(nil, &got), appendCall(nil, &c)) {
			t.Errorf("op %d: round trip differs: %+v", c.Op, got)
		}
	}
	if _, err := DecodeCall(opLimit, nil); err == nil {
		t.Error("unknown op accepted")
	}
}

func TestReplyCarriesStatusErrors(t *testing.T) {
	b := AppendReply(nil, OpGet, &Reply{Err: &StatusError{Code: 404, Reason: ReasonNotFound, Message: "Pod \"x\" not found"}})
	var r Reply
	if err := decodeReply(OpGet, string(b), nil, nil, &r); err != nil {
		t.Fatal(err)
	}
	if !IsNotFound(r.Err) || IsConflict(r.Err) || r.Err.Code != 404 {
		t.Fatalf("got %+v", r.Err)
	}
	wrapped := errors.Join(errors.New("context"), r.Err)
	if !IsNotFound(wrapped) {
		t.Error("IsNotFound must see through wrapping")
	}
}

// The judge decodes bytes written by untrusted code: nothing may panic or
// allocate without bound.
func FuzzDecodeCall(f *testing.F) {
	for _, o := range sampleObjects() {
		f.Add(uint32(OpCreate), AppendObject(nil, o))
	}
	f.Add(uint32(OpList), appendCall(nil, &Call{Op: OpList, Kind: KindPod, Labels: map[string]string{"a": "b"}}))
	f.Add(uint32(OpResult), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, op uint32, b []byte) {
		c, err := DecodeCall(Op(op), b)
		if err == nil && c.Object != nil {
			AppendObject(nil, c.Object)
		}
		DecodeObject(b)
	})
}

// Decoding copies a message once and cuts every string from that copy:
// in a learner's module, where allocating is most of what decoding costs,
// a Pod with every string set costs no more allocations than one with
// every string empty (which never allocated).
func TestDecodedStringsShareOneCopy(t *testing.T) {
	pod := func(s string) *Pod {
		return &Pod{
			ObjectMeta: ObjectMeta{Name: s, GenerateName: s, Namespace: s, UID: s, ResourceVersion: s,
				OwnerReferences: []OwnerReference{{APIVersion: s, Kind: s, Name: s, UID: s}}, Finalizers: []string{s, s}},
			Spec:   PodSpec{Containers: []Container{{Name: s, Image: s}, {Name: s, Image: s}}, NodeName: s},
			Status: PodStatus{Phase: PodPhase(s), Conditions: []PodCondition{{Type: PodConditionType(s), Status: ConditionStatus(s)}}},
		}
	}
	allocs := func(p *Pod) float64 {
		b := AppendObject(nil, p)
		return testing.AllocsPerRun(100, func() {
			if _, err := DecodeObject(b); err != nil {
				t.Fatal(err)
			}
		})
	}
	empty, full := allocs(pod("")), allocs(pod("a-name-longer-than-tiny"))
	// One allocation more at most: the copy of a message that has bytes
	// to copy (an empty string's is free).
	if full > empty+1 {
		t.Errorf("decoding a Pod with 20 strings set took %v allocations, with them empty %v: each string is allocated on its own", full, empty)
	}
}
