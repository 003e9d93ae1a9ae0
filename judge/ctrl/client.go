package ctrl

import (
	"context"
	"time"
)

// NamespacedName identifies an object.
type NamespacedName struct {
	Namespace string
	Name      string
}

func (n NamespacedName) String() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

// ObjectKey is the key Client.Get takes.
type ObjectKey = NamespacedName

// KeyOf returns the key of an object.
func KeyOf(obj Object) ObjectKey {
	m := obj.GetObjectMeta()
	return ObjectKey{Namespace: m.Namespace, Name: m.Name}
}

// Request names the object to reconcile. It carries no event: a deletion
// shows up as Get returning NotFound.
type Request struct {
	NamespacedName
}

// Result tells the judge when to call Reconcile again for this request.
type Result struct {
	// RequeueAfter > 0 asks for another reconcile after that much
	// (virtual) time, even if nothing changes.
	RequeueAfter time.Duration
}

// Reconciler is the function a learner writes.
type Reconciler func(ctx context.Context, c Client, req Request) (Result, error)

// Client reads from the controller's cache and writes to the API server.
//
// Reads may lag behind writes: a List right after a Create need not show
// the new object yet.
type Client interface {
	// Get reads one object into obj.
	Get(ctx context.Context, key ObjectKey, obj Object) error
	// List reads every object of the list's kind that matches the options,
	// sorted by name.
	List(ctx context.Context, list ObjectList, opts ...ListOption) error
	// Create stores a new object. With an empty Name and a GenerateName,
	// the server appends a unique suffix. obj is updated with the stored
	// object (UID, ResourceVersion, Name).
	Create(ctx context.Context, obj Object) error
	// Update replaces the object's metadata and spec; status is ignored.
	// It fails with a Conflict if obj.ResourceVersion is not the latest.
	Update(ctx context.Context, obj Object) error
	// UpdateStatus replaces only the object's status.
	UpdateStatus(ctx context.Context, obj Object) error
	// Delete deletes the object named by obj. With finalizers present it
	// only sets DeletionTimestamp.
	Delete(ctx context.Context, obj Object) error
}

// ListOption narrows a List.
type ListOption interface {
	applyToList(*listOptions)
}

type listOptions struct {
	namespace string
	labels    map[string]string
	ownerUID  string
}

// InNamespace limits a List to one namespace.
type InNamespace string

func (n InNamespace) applyToList(o *listOptions) { o.namespace = string(n) }

// MatchingLabels limits a List to objects carrying every given label.
type MatchingLabels map[string]string

func (m MatchingLabels) applyToList(o *listOptions) {
	if o.labels == nil {
		o.labels = map[string]string{}
	}
	for k, v := range m {
		o.labels[k] = v
	}
}

type ownedBy string

func (u ownedBy) applyToList(o *listOptions) { o.ownerUID = string(u) }

// OwnedBy limits a List to objects whose controller is owner (by UID).
func OwnedBy(owner Object) ListOption { return ownedBy(owner.GetObjectMeta().UID) }

// Log writes a line to the log shown beside the test that produced it.
// Pieces are joined with spaces; use strconv for numbers.
func Log(parts ...string) {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, p...)
	}
	hostLog(b)
}

// Now returns the simulated cluster's clock.
func Now() time.Time { return time.Unix(0, hostNow()).UTC() }
