//go:build !wasip1

package ctrl

import (
	"bytes"
	"context"
	"testing"
)

// The client decodes a reply straight into the caller's object or list:
// what the caller holds afterwards is exactly what the judge sent, with
// nothing left of what the object held before, and a reply of another
// kind is refused as before.
func TestClientFillsTheCallersObjects(t *testing.T) {
	objs := sampleObjects()
	dep, pod, cm := objs[0].(*Deployment), objs[1].(*Pod), objs[2].(*ConfigMap)
	var listed []Object
	NativeHost = func(op Op, msg []byte) []byte {
		switch op {
		case OpGet:
			return AppendReply(nil, op, &Reply{Object: dep})
		case OpList:
			return AppendReply(nil, op, &Reply{Items: listed})
		case OpUpdate:
			return AppendReply(nil, op, &Reply{Object: cm})
		}
		t.Fatalf("unexpected op %d", op)
		return nil
	}
	defer func() { NativeHost = nil }()
	c, ctx := &hostClient{}, context.Background()
	same := func(what string, got, want Object) {
		t.Helper()
		if !bytes.Equal(AppendObject(nil, got), AppendObject(nil, want)) {
			t.Errorf("%s: got %+v, want %+v", what, got, want)
		}
	}

	got := &Deployment{TypeMeta: TypeMeta{Kind: "Deployment"}}
	got.Status.ReadyReplicas = 9
	got.Spec.Template.Spec.NodeName = "left over"
	if err := c.Get(ctx, ObjectKey{Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	same("Get", got, dep)
	if got.Kind != "" {
		t.Errorf("Get kept the caller's TypeMeta %+v; the reply has none", got.TypeMeta)
	}

	listed = []Object{pod, &Pod{}, pod}
	var pods PodList
	if err := c.List(ctx, &pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("List gave %d Pods, want 3", len(pods.Items))
	}
	for i, want := range listed {
		same("List item", &pods.Items[i], want)
	}
	listed = nil
	if err := c.List(ctx, &pods); err != nil || pods.Items == nil || len(pods.Items) != 0 {
		t.Errorf("an empty List gave %v, %v; want an empty, non-nil list", pods.Items, err)
	}
	listed = []Object{pod, dep}
	before := pods.Items
	if err := c.List(ctx, &pods); err == nil || len(pods.Items) != len(before) {
		t.Errorf("a listing of another kind gave %v and %d items", err, len(pods.Items))
	}

	// A write's reply of another kind is refused, the object left as it was.
	mine := &Deployment{ObjectMeta: ObjectMeta{Name: "mine"}}
	if err := c.Update(ctx, mine); err == nil || mine.Name != "mine" {
		t.Errorf("an update answered with a ConfigMap gave %v and left %q", err, mine.Name)
	}
}

// The small slices of listed objects are cut from shared allocations
// (codec.go, objectSlab); an append to one object's slice must never
// write into another's.
func TestDecodedSlicesHaveNoRoomToShare(t *testing.T) {
	objs := sampleObjects()
	dep, pod := objs[0].(*Deployment), objs[1].(*Pod)
	owned := *dep
	owned.OwnerReferences = pod.OwnerReferences
	owned.Spec.Template.OwnerReferences = pod.OwnerReferences
	var reply []byte
	NativeHost = func(op Op, msg []byte) []byte { return reply }
	defer func() { NativeHost = nil }()
	c, ctx := &hostClient{}, context.Background()

	reply = AppendReply(nil, OpList, &Reply{Items: []Object{pod, pod, pod}})
	var pods PodList
	if err := c.List(ctx, &pods); err != nil {
		t.Fatal(err)
	}
	p := &pods.Items[0]
	p.Spec.Containers = append(p.Spec.Containers, Container{Name: "extra"})
	p.OwnerReferences = append(p.OwnerReferences, OwnerReference{Name: "extra"})
	p.Status.Conditions = append(p.Status.Conditions, PodCondition{Type: "extra"})
	for i := 1; i < len(pods.Items); i++ {
		if !bytes.Equal(AppendObject(nil, &pods.Items[i]), AppendObject(nil, pod)) {
			t.Errorf("appending to Pod 0's slices changed Pod %d: %+v", i, pods.Items[i])
		}
	}

	// A Deployment's owner references and its template's are two slices.
	reply = AppendReply(nil, OpGet, &Reply{Object: &owned})
	var got Deployment
	if err := c.Get(ctx, ObjectKey{Name: "web"}, &got); err != nil {
		t.Fatal(err)
	}
	got.OwnerReferences[0].Name = "changed"
	if n := got.Spec.Template.OwnerReferences[0].Name; n != pod.OwnerReferences[0].Name {
		t.Errorf("changing the Deployment's owner reference changed its template's to %q", n)
	}
}
