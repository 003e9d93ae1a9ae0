package exercise

import (
	"ctrljudge/judge/ctrl"
	"fmt"
	"strings"
)

// Reference is an exercise's tests.yaml declaration of what its statement
// leaves to the learner, which the differential oracle does not compare.
type Reference struct {
	// Free lists fields as "Kind path" ("Pod metadata.annotations"): the
	// field and everything under it are not compared. Kind "*" is any
	// kind; a path segment "*" is any key (an owner reference's key is
	// "Kind name"). A segment is matched whole.
	Free []string `json:"free,omitempty"`
	// Writes is "each" (the default): with no fault planned, each write
	// and the object it touched must be the reference's, in order; or
	// "end": the statement leaves the order of writes free, and only the
	// objects left at the end are compared.
	Writes string `json:"writes,omitempty"`
	// Requeue is "each" (the default where writes are compared each): up
	// to the first fault, every call that returned no error must ask for
	// what the reference's did, an empty Result or the same RequeueAfter;
	// or "free": the statement leaves the timer to the learner.
	Requeue string `json:"requeue,omitempty"`
}

// ComparesRequeue says whether the requeue decisions are compared.
func (r *Reference) ComparesRequeue() bool { return r.Writes != "end" && r.Requeue != "free" }

// FreeField is one parsed Reference.Free entry.
type FreeField struct {
	kind string
	path []string
}

func ParseReference(r *Reference) ([]FreeField, error) {
	switch r.Writes {
	case "", "each", "end":
	default:
		return nil, fmt.Errorf("reference.writes: %q is neither each nor end", r.Writes)
	}
	switch r.Requeue {
	case "", "each", "free":
	default:
		return nil, fmt.Errorf("reference.requeue: %q is neither each nor free", r.Requeue)
	}
	var out []FreeField
	for _, f := range r.Free {
		kind, path, ok := strings.Cut(strings.TrimSpace(f), " ")
		path = strings.TrimSpace(path)
		if !ok || path == "" || (kind != "*" && ctrl.NewObject(ctrl.Kind(kind)) == nil) {
			return nil, fmt.Errorf("reference.free: %q is not \"Kind path\" (Kind one of %s or *)", f, kindList())
		}
		out = append(out, FreeField{kind, strings.Split(path, ".")})
	}
	return out, nil
}

func (f FreeField) Covers(kind ctrl.Kind, path []string) bool {
	if f.kind != "*" && f.kind != string(kind) || len(path) < len(f.path) {
		return false
	}
	for i, seg := range f.path {
		if seg != "*" && seg != path[i] {
			return false
		}
	}
	return true
}

// kindList names the kinds the SDK declares, for messages.
func kindList() string {
	var names []string
	for _, k := range ctrl.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}
