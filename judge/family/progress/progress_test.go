package progress

import (
	"testing"
	"time"

	"ctrljudge/judge/ctrl"
)

// The model against exercise 176's statement alone: the writes of its
// worked example ("A rollout with a typo, minute by minute"), each
// written out by hand, pass the per-write checks, and the mistakes the
// statement names fail them; at rest, a rollout stuck past its deadline
// is not converged.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func cond(st ctrl.ConditionStatus, reason string, upd, trans int) ctrl.DeploymentCondition {
	return ctrl.DeploymentCondition{Status: st, Reason: reason, Message: "m", LastUpdateTime: at(upd), LastTransitionTime: at(trans)}
}

func chat(gen int64) *ctrl.Deployment {
	d := &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: "chat", Namespace: "default", Generation: gen, CreationTimestamp: t0}}
	d.Spec.Replicas = 1
	d.Spec.ProgressDeadlineSeconds = 900
	return d
}

func st(gen int64, r, u, ready, a int32, av, pr ctrl.DeploymentCondition) ctrl.DeploymentStatus {
	return ctrl.DeploymentStatus{ObservedGeneration: gen, Replicas: r, UpdatedReplicas: u, ReadyReplicas: ready, AvailableReplicas: a,
		Available: av, Progressing: pr}
}

func TestProgressModelFollowsTheWorkedExample(t *testing.T) {
	avail := cond(ctrl.ConditionTrue, ReasonMinAvailable, 0, 0)
	steps := []struct {
		what     string
		gen      int64
		old, new ctrl.DeploymentStatus
		now      int
	}{
		{"first call", 1, ctrl.DeploymentStatus{}, st(1, 1, 1, 1, 1, avail, cond(ctrl.ConditionTrue, ReasonComplete, 0, 0)), 0},
		{"the typo", 2, st(1, 1, 1, 1, 1, avail, cond(ctrl.ConditionTrue, ReasonComplete, 0, 0)),
			st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 1, 0)), 1},
		{"the deadline", 2, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 1, 0)),
			st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionFalse, ReasonDeadline, 1, 16)), 16},
		{"the fix", 3, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionFalse, ReasonDeadline, 1, 16)),
			st(3, 3, 1, 2, 1, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 18, 18)), 18},
		{"chat-b1 deleted", 3, st(3, 3, 1, 2, 1, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 18, 18)),
			st(3, 2, 1, 2, 1, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 19, 18)), 19},
		{"chat-a1 deleted", 3, st(3, 2, 1, 2, 1, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 19, 18)),
			st(3, 1, 1, 1, 1, avail, cond(ctrl.ConditionTrue, ReasonComplete, 20, 18)), 20},
	}
	for _, s := range steps {
		if msg := checkConditions(chat(s.gen), s.old, s.new, at(s.now)); msg != "" {
			t.Errorf("%s: %s", s.what, msg)
		}
	}

	// The mistakes: a timeout a minute early (from the creation, say), a
	// fresh lastTransitionTime, lastUpdateTime moved without progress or
	// kept despite it, a timeout with no deadline.
	stuck := st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 1, 0))
	bad := []struct {
		what     string
		d        *ctrl.Deployment
		old, new ctrl.DeploymentStatus
		now      int
	}{
		{"early timeout", chat(2), stuck, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionFalse, ReasonDeadline, 1, 15)), 15},
		{"fresh lastTransitionTime", chat(2), stuck, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 1, 5)), 5},
		{"lastUpdateTime without progress", chat(2), stuck, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 5, 0)), 5},
		{"progress not dated", chat(2), stuck, st(2, 3, 2, 1, 0, avail, cond(ctrl.ConditionTrue, ReasonUpdated, 1, 0)), 5},
		{"Available's lastUpdateTime moved", chat(2), stuck,
			st(2, 2, 1, 1, 0, cond(ctrl.ConditionTrue, ReasonMinAvailable, 5, 0), cond(ctrl.ConditionTrue, ReasonUpdated, 1, 0)), 5},
		{"lastUpdateTime moved at the timeout", chat(2), stuck, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionFalse, ReasonDeadline, 16, 16)), 16},
	}
	noDeadline := chat(2)
	noDeadline.Spec.ProgressDeadlineSeconds = 0
	bad = append(bad, struct {
		what     string
		d        *ctrl.Deployment
		old, new ctrl.DeploymentStatus
		now      int
	}{"timeout without a deadline", noDeadline, stuck, st(2, 2, 1, 1, 0, avail, cond(ctrl.ConditionFalse, ReasonDeadline, 1, 60)), 60})
	for _, b := range bad {
		if msg := checkConditions(b.d, b.old, b.new, at(b.now)); msg == "" {
			t.Errorf("%s: passed", b.what)
		}
	}

	// At rest: stuck and True past the deadline is not converged; the
	// same a minute before the deadline, and False after it, are.
	d := chat(2)
	d.Status = stuck
	want := numbers(stuck)
	if converged(d, want, at(16)) == "" {
		t.Error("a rollout stuck past its deadline, still True, counts as converged")
	}
	if msg := converged(d, want, at(15)); msg != "" {
		t.Errorf("a minute before the deadline: %s", msg)
	}
	d.Status.Progressing = cond(ctrl.ConditionFalse, ReasonDeadline, 1, 16)
	if msg := converged(d, want, at(30)); msg != "" {
		t.Errorf("timed out: %s", msg)
	}
}
