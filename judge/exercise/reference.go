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
	// Results is "" (the default): what each call returns is the
	// learner's, within the rules; or "each": the statement says exactly
	// when a call returns an error and when it asks to be called again,
	// and after how long, so each call's result must be the reference's,
	// in order, up to the first fault of either run, as writes are.
	Results string `json:"results,omitempty"`
}

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
	switch r.Results {
	case "", "each":
	default:
		return nil, fmt.Errorf("reference.results: %q is not each", r.Results)
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
