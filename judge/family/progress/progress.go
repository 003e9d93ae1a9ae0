package progress

import (
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
	"ctrljudge/judge/family/status"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The words exercise 176's statement fixes, Kubernetes' own.
const (
	ReasonMinAvailable   = "MinimumReplicasAvailable"
	ReasonMinUnavailable = "MinimumReplicasUnavailable"
	ReasonUpdated        = "ReplicaSetUpdated"
	ReasonComplete       = "NewReplicaSetAvailable"
	ReasonDeadline       = "ProgressDeadlineExceeded"
)

// Family is the model. Each Deployment's status counts its Pods as in
// 172 and carries two conditions:
//
//   - Available says whether at least spec.replicas - maxUnavailable
//     Pods are Ready;
//   - Progressing is True while the rollout moves (ReplicaSetUpdated),
//     True with NewReplicaSetAvailable once it is complete, and False with
//     ProgressDeadlineExceeded once no progress has been seen for
//     spec.progressDeadlineSeconds (0: never).
//
// After every status write: lastTransitionTime moves, to the write's
// time, exactly when the condition's status changes; lastUpdateTime is
// either kept or the write's time, and Progressing's moves exactly when
// the write shows progress; ProgressDeadlineExceeded is never written
// before the deadline. At rest the counts, the conditions' statuses and
// reasons are right for the Pods and the clock: a rollout stuck past its
// deadline says so, though no event came after the deadline.
type Family struct{}

// counts is the status 172's table gives: what the Pods say, apart from
// the conditions.
func counts(w family.World, d *ctrl.Deployment) ctrl.DeploymentStatus {
	st := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	img := ctrl.PodImage(&d.Spec.Template.Spec)
	for _, row := range status.StatusTable {
		n := int32(0)
		for _, p := range pods(w, d) {
			if status.Staying(p) && row.Counts(p, img) {
				n++
			}
		}
		*row.Field(&st) = n
	}
	return st
}

// pods lists every Pod d controls, in name order.
func pods(w family.World, d *ctrl.Deployment) []*ctrl.Pod {
	var out []*ctrl.Pod
	for _, o := range w.List(ctrl.KindPod) {
		p := o.(*ctrl.Pod)
		if p.Namespace == d.Namespace && ctrl.IsControlledBy(p, d) {
			out = append(out, p)
		}
	}
	return out
}

// numbers is a status without its conditions.
func numbers(st ctrl.DeploymentStatus) ctrl.DeploymentStatus {
	st.Available, st.Progressing = ctrl.DeploymentCondition{}, ctrl.DeploymentCondition{}
	return st
}

// availableWanted says whether Available should be True: enough Pods are
// Ready, whatever their image.
func availableWanted(d *ctrl.Deployment, ready int32) bool {
	return ready >= d.Spec.Replicas-d.Spec.Strategy.RollingUpdate.MaxUnavailable
}

// complete says whether a status shows the rollout done: every Pod that
// counts runs the template's image and is Ready, as many as asked for.
func complete(d *ctrl.Deployment, st ctrl.DeploymentStatus) bool {
	r := d.Spec.Replicas
	return st.Replicas == r && st.UpdatedReplicas == r && st.AvailableReplicas == r
}

// progressed says whether going from status before to the counts after
// is progress, as the statement defines it: a first report, a new
// generation, or any count moving the rollout's way.
func progressed(d *ctrl.Deployment, before, after ctrl.DeploymentStatus) bool {
	return before.Progressing.Status == "" || before.ObservedGeneration != d.Generation ||
		after.UpdatedReplicas > before.UpdatedReplicas ||
		after.Replicas-after.UpdatedReplicas < before.Replicas-before.UpdatedReplicas ||
		after.ReadyReplicas > before.ReadyReplicas || after.AvailableReplicas > before.AvailableReplicas
}

func deadline(d *ctrl.Deployment) time.Duration {
	return time.Duration(d.Spec.ProgressDeadlineSeconds) * time.Second
}

func now(w family.World) time.Time {
	if c, ok := w.(family.Clocked); ok {
		return c.Now()
	}
	return time.Time{}
}

func (Family) Converged(w family.World) (bool, string) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.DeletionTimestamp != nil {
			continue
		}
		if bad := converged(d, counts(w, d), now(w)); bad != "" {
			return false, "Deployment " + d.Name + ": " + bad + " Its Pods: " + family.DescribePods(pods(w, d)) + "."
		}
	}
	return true, ""
}

// converged checks a Deployment's stored status against want, the counts
// of its Pods, at time t.
func converged(d *ctrl.Deployment, want ctrl.DeploymentStatus, t time.Time) string {
	have := d.Status
	if numbers(have) != want {
		var diff []string
		for _, f := range []struct {
			name      string
			got, want int64
		}{{"observedGeneration", have.ObservedGeneration, want.ObservedGeneration}, {"replicas", int64(have.Replicas), int64(want.Replicas)},
			{"updatedReplicas", int64(have.UpdatedReplicas), int64(want.UpdatedReplicas)}, {"readyReplicas", int64(have.ReadyReplicas), int64(want.ReadyReplicas)},
			{"availableReplicas", int64(have.AvailableReplicas), int64(want.AvailableReplicas)}} {
			if f.got != f.want {
				diff = append(diff, "status."+f.name+" is "+strconv.FormatInt(f.got, 10)+", but should be "+strconv.FormatInt(f.want, 10))
			}
		}
		return strings.Join(diff, "; ") + " (the counts are 172's: a Failed Pod, or one being deleted, counts in none; observedGeneration is metadata.generation)."
	}
	a := have.Available
	wantA, reasonA := ctrl.ConditionFalse, ReasonMinUnavailable
	if availableWanted(d, want.ReadyReplicas) {
		wantA, reasonA = ctrl.ConditionTrue, ReasonMinAvailable
	}
	if a.Status != wantA || a.Reason != reasonA {
		return "Available says " + says(a) + ", but " + text.Itoa(want.ReadyReplicas) + " of the " + text.Itoa(d.Spec.Replicas) +
			" Pods asked for are Ready (maxUnavailable " + text.Itoa(d.Spec.Strategy.RollingUpdate.MaxUnavailable) + "), so it should say " +
			string(wantA) + " (" + reasonA + ")."
	}
	p := have.Progressing
	dl := deadline(d)
	switch {
	case complete(d, want):
		if p.Status != ctrl.ConditionTrue || p.Reason != ReasonComplete {
			return "Progressing says " + says(p) + ", but the rollout is complete (every Pod asked for runs the template's image and is Ready), " +
				"so it should say True (" + ReasonComplete + ")."
		}
	case p.Status == ctrl.ConditionTrue && p.Reason == ReasonComplete:
		// Complete at this generation earlier: it stays so until the spec changes.
	case p.Status == ctrl.ConditionFalse && p.Reason == ReasonDeadline:
		if dl <= 0 {
			return "Progressing says False (" + ReasonDeadline + "), but the Deployment has no progress deadline (progressDeadlineSeconds 0)."
		}
	case p.Status == ctrl.ConditionTrue && p.Reason == ReasonUpdated:
		if dl > 0 && !t.Before(p.LastUpdateTime.Add(dl)) {
			return "Progressing still says True (" + ReasonUpdated + ") at " + stamp(t) + ", but its last progress was at " + stamp(p.LastUpdateTime) +
				" and the deadline is " + strconv.Itoa(int(d.Spec.ProgressDeadlineSeconds)) + "s: since " + stamp(p.LastUpdateTime.Add(dl)) +
				" it should say False (" + ReasonDeadline + "). Nothing else calls your controller when Pods are stuck: ask to be called " +
				"again at the deadline (RequeueAfter)."
		}
	default:
		return "Progressing says " + says(p) + ", which no rule gives while the rollout is not complete: True (" + ReasonUpdated +
			") while it moves, False (" + ReasonDeadline + ") once the deadline has passed without progress."
	}
	for _, c := range []struct {
		name string
		c    ctrl.DeploymentCondition
	}{{"Available", a}, {"Progressing", p}} {
		if c.c.Message == "" {
			return c.name + " has no message: say in a sentence what it means, for people."
		}
		if c.c.LastTransitionTime.IsZero() || c.c.LastUpdateTime.IsZero() || c.c.LastTransitionTime.After(t) || c.c.LastUpdateTime.After(t) {
			return c.name + "'s lastTransitionTime (" + stamp(c.c.LastTransitionTime) + ") and lastUpdateTime (" + stamp(c.c.LastUpdateTime) +
				") should both be set, and not after now (" + stamp(t) + ")."
		}
	}
	return ""
}

// says words a condition: "True (ReplicaSetUpdated)", or "nothing".
func says(c ctrl.DeploymentCondition) string {
	if c.Status == "" {
		return "nothing (no condition)"
	}
	return string(c.Status) + " (" + c.Reason + ")"
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (Family) CheckWrite(w family.World, wr *family.Write) (string, *verdict.Violation) {
	m := wr.Object.GetObjectMeta()
	d, ok := wr.Object.(*ctrl.Deployment)
	if !ok || wr.Verb != "update-status" {
		if ok && wr.Verb == "update" && wr.Before != nil && wr.Before.GetObjectMeta().Generation == m.Generation {
			return "", nil // metadata only: the rules on others' metadata judge it
		}
		return "Your controller wrote to " + string(wr.Object.GetObjectKind()) + " " + m.Name + " (" + wr.Verb + "). This controller only " +
			"reports: the Pods and Deployments are the test's, and its one write is a Deployment's status, with UpdateStatus.", nil
	}
	if og := d.Status.ObservedGeneration; og > m.Generation {
		return "Your status write for Deployment " + d.Name + " set observedGeneration to " + strconv.FormatInt(og, 10) +
			", but the Deployment is only at generation " + strconv.FormatInt(m.Generation, 10) + ": it is metadata.generation as read, never more.", nil
	}
	before, _ := wr.Before.(*ctrl.Deployment)
	if before == nil {
		return "", nil
	}
	return checkConditions(d, before.Status, d.Status, wr.Now), nil
}

// checkConditions holds a status write, from status old to status st at
// time t, to the statement's rules on timestamps and on the deadline.
func checkConditions(d *ctrl.Deployment, old, st ctrl.DeploymentStatus, t time.Time) string {
	at := "Your status write for Deployment " + d.Name + " at " + stamp(t)
	for _, c := range []struct {
		name     string
		old, new ctrl.DeploymentCondition
		reasons  []string
	}{{"Available", old.Available, st.Available, []string{ReasonMinAvailable, ReasonMinUnavailable}},
		{"Progressing", old.Progressing, st.Progressing, []string{ReasonUpdated, ReasonComplete, ReasonDeadline}}} {
		n, o := c.new, c.old
		if n.Status == "" {
			if o.Status != "" {
				return at + " removed the " + c.name + " condition. Once reported, a condition stays: its status says what holds now."
			}
			continue
		}
		if n.Status != ctrl.ConditionTrue && n.Status != ctrl.ConditionFalse {
			return at + " set " + c.name + " to status " + strconv.Quote(string(n.Status)) + ": it is True or False."
		}
		if !oneOf(n.Reason, c.reasons) {
			return at + " gave " + c.name + " the reason " + strconv.Quote(n.Reason) + ": the statement's reasons for it are " + strings.Join(c.reasons, ", ") + "."
		}
		if want := statusOf[n.Reason]; n.Status != want {
			return at + " set " + c.name + " to " + string(n.Status) + " with reason " + n.Reason + ", which goes with " + string(want) + " only."
		}
		switch {
		case n.Status != o.Status && !n.LastTransitionTime.Equal(t):
			what := c.name + " is new"
			if o.Status != "" {
				what = c.name + " went from " + string(o.Status) + " to " + string(n.Status)
			}
			return at + " set its lastTransitionTime to " + stamp(n.LastTransitionTime) + ", but " + what + " in this write: " +
				"a transition happened now, so lastTransitionTime is now (ctrl.Now())."
		case n.Status == o.Status && !n.LastTransitionTime.Equal(o.LastTransitionTime):
			return at + " moved " + c.name + "'s lastTransitionTime from " + stamp(o.LastTransitionTime) + " to " + stamp(n.LastTransitionTime) +
				", though its status stayed " + string(n.Status) + ". It says since when the status holds: keep it unless the status changes."
		}
		if !n.LastUpdateTime.Equal(o.LastUpdateTime) && !n.LastUpdateTime.Equal(t) {
			return at + " set " + c.name + "'s lastUpdateTime to " + stamp(n.LastUpdateTime) + ": it is either kept or now (ctrl.Now())."
		}
	}
	a, oa := st.Available, old.Available
	if a.Status != "" && a.Status == oa.Status && a.Reason == oa.Reason && !a.LastUpdateTime.Equal(oa.LastUpdateTime) {
		return at + " moved Available's lastUpdateTime, though it still says " + says(a) + ": it moves only when the status or the reason changes."
	}
	p, op := st.Progressing, old.Progressing
	dl := deadline(d)
	moved := !p.LastUpdateTime.Equal(op.LastUpdateTime)
	switch {
	case p.Reason == ReasonDeadline && op.Reason != ReasonDeadline:
		switch {
		case dl <= 0:
			return at + " said Progressing False (" + ReasonDeadline + "), but the Deployment has no deadline (progressDeadlineSeconds 0): it never times out."
		case op.Status != ctrl.ConditionTrue || old.ObservedGeneration != d.Generation:
			return at + " said Progressing False (" + ReasonDeadline + ") before any progress was reported for this generation " +
				"(the stored Progressing said " + says(op) + ", observedGeneration " + strconv.FormatInt(old.ObservedGeneration, 10) + "): a new spec is progress, and the deadline counts from it."
		case t.Before(op.LastUpdateTime.Add(dl)):
			return at + " said Progressing False (" + ReasonDeadline + ") too early: the last progress was at " + stamp(op.LastUpdateTime) +
				" (Progressing's lastUpdateTime) and the deadline is " + strconv.Itoa(int(d.Spec.ProgressDeadlineSeconds)) + "s, so it passes only at " +
				stamp(op.LastUpdateTime.Add(dl)) + ". The deadline counts from the last progress, not from the Deployment's creation."
		case moved:
			return at + " moved Progressing's lastUpdateTime when the deadline passed: it says when progress was last seen, so it is kept."
		}
	case p.Reason == ReasonUpdated || p.Reason == ReasonComplete && op.Reason != ReasonComplete:
		// A report of progress: lastUpdateTime is now exactly when the
		// write shows progress (or the rollout completing).
		prog := progressed(d, old, st) || p.Reason == ReasonComplete
		switch {
		case prog && !p.LastUpdateTime.Equal(t):
			return at + " shows progress (" + progressWords(d, old, st) + ") but left Progressing's lastUpdateTime at " + stamp(p.LastUpdateTime) +
				": progress moves it to now, and the deadline counts from it."
		case !prog && moved:
			return at + " moved Progressing's lastUpdateTime to now, but nothing progressed since the stored status (same generation, " +
				"no count moved the rollout's way): without progress it is kept, or a stuck rollout would never time out."
		}
	case moved:
		return at + " moved Progressing's lastUpdateTime while it says " + says(p) + ": it moves only with progress."
	}
	return ""
}

// progressWords says what progressed, for a message.
func progressWords(d *ctrl.Deployment, old, st ctrl.DeploymentStatus) string {
	switch {
	case old.Progressing.Status == "":
		return "a first report"
	case old.ObservedGeneration != d.Generation:
		return "a new generation, " + strconv.FormatInt(d.Generation, 10)
	case st.Progressing.Reason == ReasonComplete && old.Progressing.Reason != ReasonComplete:
		return "the rollout completed"
	}
	return "the counts moved the rollout's way"
}

// statusOf is the status each reason goes with.
var statusOf = map[string]ctrl.ConditionStatus{
	ReasonMinAvailable: ctrl.ConditionTrue, ReasonMinUnavailable: ctrl.ConditionFalse,
	ReasonUpdated: ctrl.ConditionTrue, ReasonComplete: ctrl.ConditionTrue, ReasonDeadline: ctrl.ConditionFalse,
}

func oneOf(s string, xs []string) bool {
	for _, x := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// Hint words the usual cause of each failure in this family's terms.
func (Family) Hint(oracle verdict.Oracle) string {
	switch oracle {
	case verdict.OracleConvergence:
		return "Check the last state against the rules. A Deployment whose Pods are stuck sends no more events: while Progressing is True " +
			"and a deadline is set, return ctrl.Result{RequeueAfter: lastUpdateTime + deadline - now}."
	case verdict.OracleIdempotency:
		return "Compute the whole status, conditions included, from what you read, and write only when it differs. Keep the stored " +
			"timestamps unless the rules move them: a fresh ctrl.Now() in every status differs from the last one."
	case verdict.OracleSafety:
		return "lastTransitionTime moves only when a condition's status changes, Progressing's lastUpdateTime only with progress, and " +
			"ProgressDeadlineExceeded only once lastUpdateTime + deadline has come."
	case verdict.OracleWrites:
		return "Compare your writes with the expected ones: one status write per call, and none when the stored status is right."
	}
	return status.StatusHints[oracle]
}

// Sample: desired counts the Pods asked for, actual the Pods reported,
// ready the Ready ones reported.
func (Family) Sample(w family.World) (desired, actual, ready int) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.DeletionTimestamp != nil {
			continue
		}
		desired += int(d.Spec.Replicas)
		actual += int(d.Status.Replicas)
		ready += int(d.Status.ReadyReplicas)
	}
	return desired, actual, ready
}

// Detail renders a Deployment's status for write lists ("replicas 2,
// updated 1, ready 2, available 1, observedGeneration 2, Available True,
// Progressing True ReplicaSetUpdated") and a Pod's image.
func (Family) Detail(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.Deployment:
		st := x.Status
		s := "replicas " + text.Itoa(st.Replicas) + ", updated " + text.Itoa(st.UpdatedReplicas) + ", ready " + text.Itoa(st.ReadyReplicas) +
			", available " + text.Itoa(st.AvailableReplicas) + ", observedGeneration " + strconv.FormatInt(st.ObservedGeneration, 10)
		if c := st.Available; c.Status != "" {
			s += ", Available " + string(c.Status)
		}
		if c := st.Progressing; c.Status != "" {
			s += ", Progressing " + string(c.Status) + " " + c.Reason
		}
		return s
	case *ctrl.Pod:
		return ctrl.PodImage(&x.Spec)
	}
	return ""
}

// Describe says what a test's Deployment starts with: its image, its
// deadline and the status it already reports.
func (m Family) Describe(o ctrl.Object) string {
	d, ok := o.(*ctrl.Deployment)
	if !ok {
		return ""
	}
	s := "image " + ctrl.PodImage(&d.Spec.Template.Spec) + ", replicas " + text.Itoa(d.Spec.Replicas)
	if d.Spec.ProgressDeadlineSeconds > 0 {
		s += ", progress deadline " + strconv.Itoa(int(d.Spec.ProgressDeadlineSeconds)) + "s"
	} else {
		s += ", no progress deadline"
	}
	if d.Status == (ctrl.DeploymentStatus{}) {
		return s + ", no status yet"
	}
	return s + ", status: " + m.Detail(d)
}
