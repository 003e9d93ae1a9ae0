package status

import (
	"slices"
	"strconv"
	"strings"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// Family is the model of a controller that only reports. Each Deployment's status
// must count its Pods as they are on the API server, and observedGeneration
// must name the spec that status describes. The Pods are the test's; the
// controller writes nothing but Deployment status.
//
// Pods being deleted and Failed Pods count in none of the fields; of the
// others:
//
//	replicas           all of them
//	updatedReplicas    those on the template's image
//	readyReplicas      the Ready ones
//	availableReplicas  the Ready ones on the template's image
type Family struct{}

// StatusTable is exercise 172's table of what each field counts, among
// the Pods that count at all (see staying). It is written from the
// statement, field by field, rather than as the reference solution's one
// pass over the Pods, so that a mistake in the solution is not copied here.
var StatusTable = []struct {
	Field  func(*ctrl.DeploymentStatus) *int32
	Counts func(p *ctrl.Pod, image string) bool
}{
	{func(s *ctrl.DeploymentStatus) *int32 { return &s.Replicas }, func(*ctrl.Pod, string) bool { return true }},
	{func(s *ctrl.DeploymentStatus) *int32 { return &s.UpdatedReplicas }, onImage},
	{func(s *ctrl.DeploymentStatus) *int32 { return &s.ReadyReplicas }, func(p *ctrl.Pod, _ string) bool { return ctrl.IsPodReady(p) }},
	{func(s *ctrl.DeploymentStatus) *int32 { return &s.AvailableReplicas }, func(p *ctrl.Pod, img string) bool {
		return ctrl.IsPodReady(p) && onImage(p, img)
	}},
}

func onImage(p *ctrl.Pod, image string) bool { return ctrl.PodImage(&p.Spec) == image }

// Staying says whether a Pod counts at all: one being deleted is leaving
// and a Failed one will never run again.
func Staying(p *ctrl.Pod) bool { return p.DeletionTimestamp == nil && p.Status.Phase != ctrl.PodFailed }

// wantStatus is the status Deployment d should report, from the API
// server's Pods (not the controller's cache): each field of statusTable
// counted on its own, and observedGeneration copied from the generation.
func wantStatus(w family.World, d *ctrl.Deployment) ctrl.DeploymentStatus {
	st := ctrl.DeploymentStatus{ObservedGeneration: d.Generation}
	img := ctrl.PodImage(&d.Spec.Template.Spec)
	pods := statusPods(w, d)
	for _, row := range StatusTable {
		n := int32(0)
		for _, p := range pods {
			if Staying(p) && row.Counts(p, img) {
				n++
			}
		}
		*row.Field(&st) = n
	}
	return st
}

// statusPods returns every Pod d controls, terminating and failed ones
// included, in name order.
func statusPods(w family.World, d *ctrl.Deployment) []*ctrl.Pod {
	var out []*ctrl.Pod
	for _, o := range w.List(ctrl.KindPod) {
		p := o.(*ctrl.Pod)
		if p.Namespace == d.Namespace && ctrl.IsControlledBy(p, d) {
			out = append(out, p)
		}
	}
	return out
}

// statusMismatches says in plain words where have differs from want, or
// returns "".
func statusMismatches(d *ctrl.Deployment, have, want ctrl.DeploymentStatus) string {
	img := ctrl.PodImage(&d.Spec.Template.Spec)
	var counts []string
	field := func(name string, got, n int32, truth string) {
		if got != n {
			counts = append(counts, "status."+name+" is "+text.Itoa(got)+", but "+truth)
		}
	}
	field("replicas", have.Replicas, want.Replicas, "the Deployment has "+text.Pods(int(want.Replicas)))
	field("updatedReplicas", have.UpdatedReplicas, want.UpdatedReplicas,
		"it has "+text.Pods(int(want.UpdatedReplicas))+" on the template's image "+img)
	field("readyReplicas", have.ReadyReplicas, want.ReadyReplicas, "it has "+readyPods(want.ReadyReplicas))
	field("availableReplicas", have.AvailableReplicas, want.AvailableReplicas,
		"it has "+readyPods(want.AvailableReplicas)+" on the template's image "+img)
	var out []string
	if len(counts) > 0 {
		out = append(out, strings.Join(counts, "; ")+" (a Failed Pod, or one being deleted, counts in none of these).")
	}
	if have.ObservedGeneration != want.ObservedGeneration {
		out = append(out, "status.observedGeneration is "+strconv.FormatInt(have.ObservedGeneration, 10)+
			", but metadata.generation is "+strconv.FormatInt(want.ObservedGeneration, 10)+
			": the status does not say that it describes the current spec.")
	}
	return strings.Join(out, " ")
}

// readyPods says "1 Ready Pod", "3 Ready Pods".
func readyPods(n int32) string {
	if n == 1 {
		return "1 Ready Pod"
	}
	return text.Itoa(n) + " Ready Pods"
}

func (Family) Converged(w family.World) (bool, string) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.DeletionTimestamp != nil {
			continue
		}
		if bad := statusMismatches(d, d.Status, wantStatus(w, d)); bad != "" {
			return false, "Deployment " + d.Name + ": " + bad + " Its Pods: " + family.DescribePods(statusPods(w, d)) + "."
		}
	}
	return true, ""
}

// CheckWrite: a reporting controller writes status and nothing else, and a
// status never claims a generation the Deployment has not reached.
func (Family) checkWrite(w family.World, wr *family.Write) string {
	m := wr.Object.GetObjectMeta()
	kind := string(wr.Object.GetObjectKind())
	d, ok := wr.Object.(*ctrl.Deployment)
	if !ok || wr.Verb == "create" || wr.Verb == "delete" {
		return "Your controller wrote to " + kind + " " + m.Name + " (" + wr.Verb + "). This controller only reports what it sees: " +
			"the Pods and Deployments are the test's, and its one write is a Deployment's status."
	}
	if wr.Verb == "update" && wr.Before != nil && wr.Before.GetObjectMeta().Generation != m.Generation {
		return "Your update changed the spec of Deployment " + d.Name + " (generation " +
			strconv.FormatInt(wr.Before.GetObjectMeta().Generation, 10) + " became " + strconv.FormatInt(m.Generation, 10) +
			"). The spec is the user's; this controller writes only status, with UpdateStatus."
	}
	if og := d.Status.ObservedGeneration; og > m.Generation {
		return "Your " + wr.Verb + " of Deployment " + d.Name + " set status.observedGeneration to " + strconv.FormatInt(og, 10) +
			", but the Deployment is only at generation " + strconv.FormatInt(m.Generation, 10) +
			": observedGeneration names the spec the status describes, so it is metadata.generation as read, never more."
	}
	return ""
}

// Hint points a learner at the usual cause of each failure in a
// reporting controller (verdict's general hints speak of taking steps).
func (Family) Hint(oracle verdict.Oracle) string {
	return StatusHints[oracle]
}

var StatusHints = map[verdict.Oracle]string{
	verdict.OracleConvergence: "Compare the counts with the Pods listed: which Pods does each field count? Is the status written with UpdateStatus, and is a failed write returned so that it is retried?",
	verdict.OracleIdempotency: "Compute the status, compare it with the one stored on the Deployment, and write only when they differ.",
	verdict.OracleSafety:      "This controller writes one thing: the Deployment's status, with observedGeneration copied from metadata.generation.",
	verdict.OracleWrites:      "Decide from the Deployment you read: write only when its stored status differs from the one you computed.",
}

// Sample: desired is the Pods that count (what status.replicas should
// say), actual and ready are what the statuses report.
func (Family) Sample(w family.World) (desired, actual, ready int) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.DeletionTimestamp != nil {
			continue
		}
		desired += int(wantStatus(w, d).Replicas)
		actual += int(d.Status.Replicas)
		ready += int(d.Status.ReadyReplicas)
	}
	return desired, actual, ready
}

// Describe says what a test's Deployment starts with: its image and the
// status it already reports. Pods keep the engine's words (describeObject).
func (m Family) Describe(o ctrl.Object) string {
	d, ok := o.(*ctrl.Deployment)
	if !ok {
		return ""
	}
	s := "image " + ctrl.PodImage(&d.Spec.Template.Spec)
	if d.Status == (ctrl.DeploymentStatus{}) {
		return s + ", no status yet"
	}
	return s + ", status: " + m.Detail(d)
}

// Detail renders a Deployment's status (so a write sequence shows what was
// reported) and a Pod's image.
func (Family) Detail(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.Deployment:
		st := x.Status
		return "replicas " + text.Itoa(st.Replicas) + ", updated " + text.Itoa(st.UpdatedReplicas) + ", ready " + text.Itoa(st.ReadyReplicas) +
			", available " + text.Itoa(st.AvailableReplicas) + ", observedGeneration " + strconv.FormatInt(st.ObservedGeneration, 10)
	case *ctrl.Pod:
		return ctrl.PodImage(&x.Spec)
	}
	return ""
}

func (Family) GenKinds() (steps, objects []string) {
	return append(slices.Clone(family.PodSteps), "unready", "ready", "create-pod"), append(slices.Clone(family.PodObjects), "unready-pod", "pending-pod")
}
func (Family) GenWorld(g *family.Gen)                  { family.PodWorld(g, true) }
func (Family) GenStep(g *family.Gen, kind string) bool { return family.PodStep(g, kind) }

// CheckWrite implements family.Family; none of this family's rules is a
// bound on a count.
func (f Family) CheckWrite(w family.World, wr *family.Write) (string, *verdict.Violation) {
	return f.checkWrite(w, wr), nil
}
func (Family) Space(gb *exercise.Generate) []string { return family.PodSpace(gb) }
