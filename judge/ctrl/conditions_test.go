package ctrl

import (
	"testing"
	"time"
)

// SetCondition keeps lastTransitionTime unless the status flips, and
// reports a change only when something a reader sees changed: the
// contract exercise 175's statement gives it.
func TestSetConditionKeepsTheTransitionTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	other := Condition{Type: "Scraped", Status: ConditionTrue, LastTransitionTime: t0}
	conds := []Condition{other}
	ready := Condition{Type: "Ready", Status: ConditionTrue, Reason: "DeploymentUpToDate", Message: "in step", ObservedGeneration: 1}

	if !SetCondition(&conds, ready, t0) || len(conds) != 2 || conds[1].LastTransitionTime != t0 {
		t.Fatalf("adding: %+v", conds)
	}
	if SetCondition(&conds, ready, t1) || conds[1].LastTransitionTime != t0 {
		t.Fatalf("the same again changed something: %+v", conds[1])
	}
	// A fresh time in the argument is ignored while the status holds.
	fresh := ready
	fresh.LastTransitionTime = t1
	if SetCondition(&conds, fresh, t1) || conds[1].LastTransitionTime != t0 {
		t.Fatalf("a fresh time alone is a change: %+v", conds[1])
	}
	next := ready
	next.ObservedGeneration = 2
	if !SetCondition(&conds, next, t1) || conds[1].LastTransitionTime != t0 || conds[1].ObservedGeneration != 2 {
		t.Fatalf("a new generation: %+v", conds[1])
	}
	blocked := Condition{Type: "Ready", Status: ConditionFalse, Reason: "ResourceExists", Message: "taken", ObservedGeneration: 2}
	if !SetCondition(&conds, blocked, t2) || conds[1].LastTransitionTime != t2 || conds[1].Reason != "ResourceExists" {
		t.Fatalf("a flip: %+v", conds[1])
	}
	if conds[0] != other {
		t.Fatalf("another type's condition changed: %+v", conds[0])
	}
	if c := FindCondition(conds, "Ready"); c == nil || c != &conds[1] {
		t.Fatalf("FindCondition: %v", c)
	}
	if FindCondition(conds, "Available") != nil || FindCondition(nil, "Ready") != nil {
		t.Fatal("FindCondition found a condition that is not there")
	}
}
