package owner

import (
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The words exercise 175's statement fixes.
const (
	ConditionReady = "Ready"
	ReasonUpToDate = "DeploymentUpToDate"
	ReasonExists   = "ResourceExists"
)

// Family is the model: each App wants one Deployment under its own name
// in its namespace, which it controls, running its image with its replica
// count. Its name may be taken by a Deployment it does not control; that
// Deployment is someone else's and stays as it is.
//
//   - no write touches a Deployment that the App of its name does not
//     control, and no Deployment is deleted;
//   - no App controls more than one Deployment;
//   - a status write keeps the Ready condition's lastTransitionTime unless
//     its status flips, and sets it to the write's time when it does.
//
// At rest, every live App whose name is free or its own Deployment's has
// that Deployment, in step, and says Ready True (DeploymentUpToDate); one
// whose name another Deployment holds says Ready False (ResourceExists);
// both at the App's generation and with a message.
type Family struct{}

// apps lists the Apps, and deployment finds the Deployment under an
// App's name.
func apps(w family.World) []*ctrl.App {
	var out []*ctrl.App
	for _, o := range w.List(ctrl.KindApp) {
		out = append(out, o.(*ctrl.App))
	}
	return out
}

func deploymentOf(w family.World, a *ctrl.App) *ctrl.Deployment {
	if o := w.Get(ctrl.KindDeployment, a.Namespace, a.Name); o != nil {
		return o.(*ctrl.Deployment)
	}
	return nil
}

// controlled lists the Deployments app controls, by UID.
func controlled(w family.World, a *ctrl.App) []string {
	var names []string
	for _, o := range w.List(ctrl.KindDeployment) {
		if o.GetObjectMeta().Namespace == a.Namespace && ctrl.IsControlledBy(o, a) {
			names = append(names, o.GetObjectMeta().Name)
		}
	}
	return names
}

// whose says, for a message, why a Deployment is not app's.
func whose(d *ctrl.Deployment, a *ctrl.App) string {
	ref := ctrl.GetControllerOf(d)
	switch {
	case ref == nil:
		for _, r := range d.OwnerReferences {
			if r.Kind == string(ctrl.KindApp) && r.Name == a.Name {
				return "its owner reference to App " + a.Name + " is not a controller reference (controller: true)"
			}
		}
		return "it has no controller owner"
	case ref.Kind == string(ctrl.KindApp) && ref.Name == a.Name:
		return "its controller is an older App " + a.Name + " (another UID), deleted since"
	}
	return "its controller is " + ref.Kind + " " + ref.Name
}

// inStep says whether d runs what app asks for.
func inStep(d *ctrl.Deployment, a *ctrl.App) bool {
	return d.Spec.Replicas == a.Spec.Replicas && ctrl.PodImage(&d.Spec.Template.Spec) == a.Spec.Image
}

// statusSays checks that app's status says Ready status with reason, at
// its generation, and words what it says instead.
func statusSays(a *ctrl.App, status ctrl.ConditionStatus, reason string) (bool, string) {
	want := "Ready " + string(status) + " (" + reason + ") at generation " + gen(a.Generation)
	c := ctrl.FindCondition(a.Status.Conditions, ConditionReady)
	switch {
	case c == nil:
		return false, "its status should say " + want + ", but it has no Ready condition"
	case c.Status != status || c.Reason != reason:
		return false, "its status should say " + want + ", but says Ready " + string(c.Status) + " (" + c.Reason + ")"
	case c.ObservedGeneration != a.Generation || a.Status.ObservedGeneration != a.Generation:
		return false, "its status should say " + want + ", but its observedGeneration is " + gen(a.Status.ObservedGeneration) +
			" and its Ready condition's " + gen(c.ObservedGeneration)
	case c.Message == "":
		return false, "its Ready condition has no message: say in a sentence what it means, for people"
	}
	return true, ""
}

func (Family) Converged(w family.World) (bool, string) {
	for _, a := range apps(w) {
		if a.DeletionTimestamp != nil {
			continue // going away: the controller writes nothing for it
		}
		if names := controlled(w, a); len(names) > 1 {
			return false, "App " + a.Name + " controls " + text.Plural(len(names), "Deployment") + ": " + strings.Join(names, ", ") +
				". It should have one, named " + a.Name + "."
		}
		d := deploymentOf(w, a)
		switch {
		case d == nil:
			return false, "App " + a.Name + " has no Deployment " + a.Name + " in namespace " + a.Namespace + ", and nothing else holds the name."
		case !ctrl.IsControlledBy(d, a):
			if ok, why := statusSays(a, ctrl.ConditionFalse, ReasonExists); !ok {
				return false, "App " + a.Name + "'s name is taken by a Deployment that is not its own (" + whose(d, a) + "), so " + why + "."
			}
		case !inStep(d, a):
			return false, "App " + a.Name + " asks for " + a.Spec.Image + " with " + text.Itoa(a.Spec.Replicas) + " replicas; its Deployment runs " +
				ctrl.PodImage(&d.Spec.Template.Spec) + " with " + text.Itoa(d.Spec.Replicas) + "."
		default:
			if ok, why := statusSays(a, ctrl.ConditionTrue, ReasonUpToDate); !ok {
				return false, "App " + a.Name + "'s Deployment is in place and in step, but " + why + "."
			}
		}
	}
	return true, ""
}

func (Family) CheckWrite(w family.World, wr *family.Write) (string, *verdict.Violation) {
	switch x := wr.Object.(type) {
	case *ctrl.Deployment:
		return checkDeployment(w, wr, x), nil
	case *ctrl.App:
		if wr.Verb == "update-status" && wr.Before != nil {
			return checkTransition(wr, wr.Before.(*ctrl.App), x), nil
		}
	}
	return "", nil
}

func checkDeployment(w family.World, wr *family.Write, d *ctrl.Deployment) string {
	var a *ctrl.App
	if o := w.Get(ctrl.KindApp, d.Namespace, d.Name); o != nil {
		a = o.(*ctrl.App)
	}
	switch wr.Verb {
	case "delete":
		return "Your controller deleted Deployment " + d.Name + ". No rule deletes a Deployment: an App's own goes with the App " +
			"(the garbage collector follows the owner reference), and any other is someone else's."
	case "update":
		before, _ := wr.Before.(*ctrl.Deployment)
		if before == nil {
			return ""
		}
		if a == nil {
			if ref := ctrl.GetControllerOf(before); ref != nil && ref.Kind == string(ctrl.KindApp) {
				return "Your controller updated Deployment " + d.Name + " for App " + ref.Name + ". An App's Deployment has exactly " +
					"the App's name: this one is no App's to keep, and App " + ref.Name + " should never have made it."
			}
			return "Your controller updated Deployment " + d.Name + ", but there is no App " + d.Name + " in namespace " + d.Namespace +
				" that it could belong to: it is someone else's."
		}
		if !ctrl.IsControlledBy(before, a) {
			return "Your controller updated Deployment " + d.Name + ", which App " + a.Name + " does not control (" + whose(before, a) +
				"). It belongs to someone else: leave it as it is, say so in the App's status (Ready False, " + ReasonExists +
				") and look again later. ctrl.IsControlledBy(&d, &app) tells them apart, by UID."
		}
	case "create":
		ref := ctrl.GetControllerOf(d)
		if ref == nil || ref.Kind != string(ctrl.KindApp) {
			return ""
		}
		for _, o := range w.List(ctrl.KindApp) {
			owner := o.(*ctrl.App)
			if owner.UID != ref.UID {
				continue
			}
			if names := controlled(w, owner); len(names) > 1 {
				return "Creating Deployment " + d.Name + " gave App " + owner.Name + " " + text.Plural(len(names), "Deployment") + ": " +
					strings.Join(names, ", ") + ". An App has one Deployment, named exactly like the App: a second create under that name " +
					"fails with AlreadyExists instead of making a twin, which a generated name never does."
			}
		}
	}
	return ""
}

// checkTransition holds a status write to the statement's rule for
// lastTransitionTime: kept unless the Ready condition's status flips,
// the write's time when it does (or when the condition is new).
func checkTransition(wr *family.Write, before, after *ctrl.App) string {
	c := ctrl.FindCondition(after.Status.Conditions, ConditionReady)
	if c == nil {
		return ""
	}
	old := ctrl.FindCondition(before.Status.Conditions, ConditionReady)
	switch {
	case old == nil || old.Status != c.Status:
		if !c.LastTransitionTime.Equal(wr.Now) {
			what := "the Ready condition is new"
			if old != nil {
				what = "Ready went from " + string(old.Status) + " to " + string(c.Status)
			}
			return "Your status write for App " + after.Name + " set lastTransitionTime to " + stamp(c.LastTransitionTime) + ", but " + what +
				" at " + stamp(wr.Now) + ": a transition happened now, so lastTransitionTime is now (ctrl.Now())."
		}
	case !c.LastTransitionTime.Equal(old.LastTransitionTime):
		return "Your status write for App " + after.Name + " moved lastTransitionTime from " + stamp(old.LastTransitionTime) + " to " +
			stamp(c.LastTransitionTime) + ", though Ready stayed " + string(c.Status) + ". It says since when the status holds: keep it " +
			"unless the status flips (ctrl.SetCondition does)."
	}
	return ""
}

// stamp shows a time as a manifest does.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func gen(n int64) string { return strconv.FormatInt(n, 10) }

// Sample: desired counts live Apps, actual those whose own Deployment
// holds their name, ready those whose Deployment is in step and whose
// status says so.
func (Family) Sample(w family.World) (desired, actual, ready int) {
	for _, a := range apps(w) {
		if a.DeletionTimestamp != nil {
			continue
		}
		desired++
		d := deploymentOf(w, a)
		if d == nil || !ctrl.IsControlledBy(d, a) {
			continue
		}
		actual++
		if ok, _ := statusSays(a, ctrl.ConditionTrue, ReasonUpToDate); ok && inStep(d, a) {
			ready++
		}
	}
	return desired, actual, ready
}

// Detail renders a written object for write lists: a Deployment's name,
// image and replicas ("chat vllm:0.6 x2"), an App's name and what its
// Ready condition says ("chat Ready False ResourceExists").
func (Family) Detail(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.Deployment:
		return x.Name + " " + ctrl.PodImage(&x.Spec.Template.Spec) + " x" + text.Itoa(x.Spec.Replicas)
	case *ctrl.App:
		c := ctrl.FindCondition(x.Status.Conditions, ConditionReady)
		if c == nil {
			return x.Name + " no Ready condition"
		}
		return x.Name + " Ready " + string(c.Status) + " " + c.Reason
	}
	return ""
}

// Describe says what matters of a test's starting objects: an App's spec
// and Ready condition, a Deployment's image, replicas and controller.
func (Family) Describe(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.App:
		s := "image " + x.Spec.Image + ", replicas " + text.Itoa(x.Spec.Replicas)
		if c := ctrl.FindCondition(x.Status.Conditions, ConditionReady); c != nil {
			s += ", Ready " + string(c.Status) + " (" + c.Reason + ")"
		}
		return s
	case *ctrl.Deployment:
		s := "image " + ctrl.PodImage(&x.Spec.Template.Spec) + ", replicas " + text.Itoa(x.Spec.Replicas)
		if ref := ctrl.GetControllerOf(x); ref != nil {
			return s + ", controlled by " + ref.Kind + " " + ref.Name
		}
		if len(x.OwnerReferences) > 0 {
			r := x.OwnerReferences[0]
			return s + ", owned (not controlled) by " + r.Kind + " " + r.Name
		}
		return s + ", no owner"
	}
	return ""
}

// Hint words the usual cause of each failure in this family's terms.
func (Family) Hint(oracle verdict.Oracle) string {
	switch oracle {
	case verdict.OracleSafety:
		return "Write only to a Deployment the App controls (ctrl.IsControlledBy, by UID), create it under the App's exact name, " +
			"and keep lastTransitionTime unless the Ready status flips."
	case verdict.OracleConvergence:
		return "Check the state shown last against the rules. A Deployment you don't control sends your App no events: " +
			"while it blocks the name, return ctrl.Result{RequeueAfter: 30 * time.Second} so that the App looks again."
	case verdict.OracleIdempotency:
		return "Write only what differs: compare image and replicas before an update, and write the status only when " +
			"ctrl.SetCondition reports a change or status.observedGeneration is behind."
	case verdict.OracleReference:
		return "Reread the rules: the Deployment's exact shape (name, labels, container, owner reference), the App's status, " +
			"and what each call returns: RequeueAfter 30s when blocked or after AlreadyExists, otherwise an empty Result."
	case verdict.OracleErrors, verdict.OracleMadeUpError:
		return "A name someone else holds is not an error, nor is AlreadyExists: report the first in the App's status and " +
			"look again after 30 seconds; an error means a call to the cluster failed."
	case verdict.OracleWrites:
		return "Compare your writes with the expected ones: one write per call, in the rules' order, and none when all is in place."
	}
	return ""
}
