package owner

import (
	"slices"
	"strconv"
	"strings"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
)

// The generator's world: Apps (drawn within the generate: block's
// deployments and replicas ranges, with its images as whole image names)
// and, under an App's name, nothing, the App's own Deployment (in step or
// drifted), or a Deployment that is not the App's.

// appNames are the names an App may take: "chat" and "chat-mini" so that
// one name begins with another and a dash.
var appNames = []string{"chat", "search", "chat-mini", "embed"}

// What holds an App's name, as the generator last left it.
const (
	holdNone    = ""
	holdOwn     = "own"     // the App's own Deployment (the controller's, once it ran)
	holdForeign = "foreign" // someone else's: no owner, another controller, a non-controller reference
)

type app struct {
	ns, name string
	image    string
	replicas int
	meta     string // metadata lines a copy created again keeps
	gone     bool   // deleted, or being deleted
	hold     string // what holds its name
}

func (a *app) ref() string { return family.Ref("App", a.ns, a.name) }

// world is the scenario so far (family.Gen.State).
type world struct {
	apps []*app
}

func state(g *family.Gen) *world {
	if w, ok := g.State.(*world); ok {
		return w
	}
	w := &world{}
	g.State = w
	return w
}

func (w *world) live() []*app {
	return slices.DeleteFunc(slices.Clone(w.apps), func(a *app) bool { return a.gone })
}

// identity draws a namespace and a name no App of the scenario has had
// there, as family.Gen draws its Deployments'.
func (w *world) identity(g *family.Gen) (ns, name string, ok bool) {
	had := make([][2]string, len(w.apps))
	for i, a := range w.apps {
		had[i] = [2]string{a.ns, a.name}
	}
	return g.DrawIdentity(appNames, had)
}

// newApp draws an App with a fresh identity and the ranges' image and
// replicas; nil when every name is taken.
func (w *world) newApp(g *family.Gen) *app {
	ns, name, ok := w.identity(g)
	if !ok {
		return nil
	}
	a := &app{ns: ns, name: name, image: g.PickOf("image", g.Ranges.Images), replicas: g.Draw("replicas", g.Ranges.Replicas)}
	w.apps = append(w.apps, a)
	return a
}

// appDoc renders an App; meta is extra metadata lines, status a status
// block or "".
func appDoc(a *app, meta, status string) string {
	s := "kind: App\napiVersion: serving.example.com/v1\nmetadata:\n  name: " + a.name + family.NamespaceLine(a.ns) + meta +
		"\nspec:\n  image: \"" + a.image + "\"\n  replicas: " + strconv.Itoa(a.replicas)
	if status != "" {
		s += "\nstatus: " + status
	}
	return s
}

// deploymentDoc renders a Deployment named like the App, with the shape
// the statement gives the App's own (selector and template labels
// app: NAME, one container named server).
func deploymentDoc(ns, name, image string, replicas int, meta string) string {
	return "kind: Deployment\napiVersion: apps/v1\nmetadata:\n  name: " + name + family.NamespaceLine(ns) + meta +
		"\nspec:\n  replicas: " + strconv.Itoa(replicas) +
		"\n  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata: {labels: {app: " + name + "}}" +
		"\n    spec:\n      containers: [{name: server, image: \"" + image + "\"}]"
}

// Owner references as a test writes them (the judge fills in the UIDs).
func appOwner(name string, controller bool) string {
	return "{apiVersion: serving.example.com/v1, kind: App, name: " + name + ", controller: " + strconv.FormatBool(controller) +
		", blockOwnerDeletion: true}"
}

const (
	// releaseOwner is another tool's object controlling a Deployment (a
	// ConfigMap standing in for, say, a Helm release).
	releaseOwner = "{apiVersion: v1, kind: ConfigMap, name: release, controller: true}"
	foreignMeta  = "\n  labels: {team: ml}\n  annotations: {example.com/note: keep-me}"
	// A condition of another type, another tool's, in an App's status.
	scrapedCondition = `{type: Scraped, status: "True", reason: ExporterFound, message: "metrics exported", lastTransitionTime: "2025-12-31T23:00:00Z"}`
)

// readyStatus renders a status block with a Ready condition written for
// no generation yet: one every controller rewrites, whatever message it
// chooses (the statement leaves messages free, so a seeded condition
// that one controller's message matched and another's did not would set
// their writes apart).
func readyStatus(status, reason string, extra []string) string {
	conds := append([]string{`{type: Ready, status: "` + status + `", reason: ` + reason +
		`, message: "as it was", lastTransitionTime: "2025-12-31T22:00:00Z"}`}, extra...)
	return "{conditions: [" + strings.Join(conds, ", ") + "]}"
}

// GenWorld draws Apps and what holds their names.
func (Family) GenWorld(g *family.Gen) {
	w := state(g)
	n := g.Deployments()
	if g.Forced("terminating-app") && n < 2 && max(g.Ranges.Deployments[0], g.Ranges.Deployments[1]) >= 2 {
		n = 2 // one App going away, and one that is not
	}
	released := map[string]bool{} // namespaces whose release ConfigMap exists
	// A kind of Deployment this scenario is about holds the name of one
	// App, its first; the other Apps draw theirs, so that a scenario
	// about one kind still meets the others and free names.
	used := map[string]bool{}
	want := func(kind string, p float64) bool {
		ok := g.Forced(kind) && !used[kind] || slices.Contains(g.Ranges.ObjectKinds, kind) && g.Chance(p)
		if ok {
			used[kind] = true
			g.Hit("object=" + kind)
		}
		return ok
	}
	var docs []string
	for i := 0; i < n; i++ {
		a := w.newApp(g)
		if a == nil {
			break
		}
		meta, extra := "", []string(nil)
		if g.Want("foreign-metadata", 0.4) {
			meta = foreignMeta
			extra = append(extra, scrapedCondition)
		}
		a.meta = meta
		if i > 0 && g.Want("terminating-app", 0.25) {
			meta += family.HeldMeta
			a.gone = true
			g.Held = append(g.Held, a.ref())
		}
		// What holds its name.
		var dep, status string
		image := a.image
		switch {
		case want("foreign-deployment", 0.25):
			if g.Chance(0.5) {
				image = g.PickOf("image", g.Ranges.Images)
			}
			dep = deploymentDoc(a.ns, a.name, image, g.Draw("replicas", g.Ranges.Replicas), "\n  labels: {team: ml}")
			a.hold = holdForeign
		case want("other-controller", 0.25):
			if !released[a.ns] {
				released[a.ns] = true
				docs = append(docs, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: release"+family.NamespaceLine(a.ns)+"\ndata: {}")
			}
			dep = deploymentDoc(a.ns, a.name, image, a.replicas, "\n  ownerReferences: ["+releaseOwner+"]")
			a.hold = holdForeign
		case want("non-controller-ref", 0.25):
			dep = deploymentDoc(a.ns, a.name, image, a.replicas, "\n  ownerReferences: ["+appOwner(a.name, false)+"]")
			a.hold = holdForeign
		case want("stale", 0.35):
			// Its own, drifted: another image, other replicas, or both,
			// perhaps with another tool's metadata, and a status that still
			// says it is in step.
			replicas := a.replicas
			switch g.Rng.IntN(3) {
			case 0:
				image = otherImage(g, a.image)
			case 1:
				replicas = otherReplicas(g, a.replicas)
			default:
				image, replicas = otherImage(g, a.image), otherReplicas(g, a.replicas)
			}
			m := ""
			if g.Want("foreign-metadata", 0.5) {
				m = foreignMeta
			}
			dep = deploymentDoc(a.ns, a.name, image, replicas, m+"\n  ownerReferences: ["+appOwner(a.name, true)+"]")
			if g.Chance(0.5) {
				status = readyStatus("True", ReasonUpToDate, extra)
			}
			a.hold = holdOwn
		case g.Chance(0.35):
			// Its own, in step, and a status that says so or not yet.
			dep = deploymentDoc(a.ns, a.name, a.image, a.replicas, "\n  ownerReferences: ["+appOwner(a.name, true)+"]")
			g.Hit("start=in-step")
			if g.Chance(0.6) {
				status = readyStatus("True", ReasonUpToDate, extra)
			}
			a.hold = holdOwn
		default:
			g.Hit("start=no-deployment")
			if g.Chance(0.3) {
				// A status left from a time the name was taken.
				status = readyStatus("False", ReasonExists, extra)
			}
		}
		if status == "" && len(extra) > 0 {
			status = "{conditions: [" + strings.Join(extra, ", ") + "]}"
		}
		if !a.gone && a.hold == holdNone {
			a.hold = holdOwn // the controller makes it before the first step
		}
		docs = append(docs, appDoc(a, meta, status))
		if dep != "" {
			docs = append(docs, dep)
		}
	}
	for _, d := range docs {
		g.Add("%s", d)
	}
}

func otherImage(g *family.Gen, image string) string {
	var others []string
	for _, x := range g.Ranges.Images {
		if x != image {
			others = append(others, x)
		}
	}
	if len(others) == 0 {
		return image
	}
	return g.PickOf("image", others)
}

func otherReplicas(g *family.Gen, r int) int {
	lo, hi := g.Ranges.Replicas[0], max(g.Ranges.Replicas[0], g.Ranges.Replicas[1])
	if lo == hi {
		return r
	}
	for {
		if x := g.Draw("replicas", g.Ranges.Replicas); x != r {
			return x
		}
	}
}

// GenStep draws one workload step of kind kind; false when the world
// offers none.
func (Family) GenStep(g *family.Gen, kind string) bool {
	w := state(g)
	pick := func(ok func(a *app) bool) *app {
		var xs []*app
		for _, a := range w.apps {
			if ok(a) {
				xs = append(xs, a)
			}
		}
		if len(xs) == 0 {
			return nil
		}
		return xs[g.Rng.IntN(len(xs))]
	}
	live := func(a *app) bool { return !a.gone }
	switch kind {
	case "image":
		a := pick(live)
		if a == nil {
			return false
		}
		a.image = otherImage(g, a.image)
		g.StepPatch(a.ref(), map[string]any{"spec": map[string]any{"image": a.image}})
	case "scale":
		a := pick(live)
		if a == nil {
			return false
		}
		a.replicas = g.Draw("replicas", g.Ranges.Replicas)
		g.StepPatch(a.ref(), map[string]any{"spec": map[string]any{"replicas": a.replicas}})
	case "metadata":
		a := pick(live)
		if a == nil {
			return false
		}
		g.StepPatch(a.ref(), map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": g.Pick([]string{"ml", "search", "ads"})}}})
	case "create":
		a := w.newApp(g)
		if a == nil {
			return false
		}
		a.hold = holdOwn
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: appDoc(a, "", "") + "\n"})
	case "take-name":
		// Someone creates a Deployment under a new App's name just before
		// the controller's create: the create fails with AlreadyExists.
		a := w.newApp(g)
		if a == nil {
			return false
		}
		a.hold = holdForeign
		g.Test.Steps = append(g.Test.Steps,
			exercise.Step{MeanwhileApply: deploymentDoc(a.ns, a.name, a.image, a.replicas, "\n  labels: {team: ml}") + "\n"},
			exercise.Step{Apply: appDoc(a, "", "") + "\n"})
	case "delete":
		a := pick(live)
		if a == nil {
			return false
		}
		a.gone = true
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: a.ref()})
	case "recreate":
		// Deleted and created again at once: a new App (a new UID), whose
		// first call may meet the old one's Deployment, which the garbage
		// collector removes only after that call.
		a := pick(func(a *app) bool { return !a.gone })
		if a == nil {
			return false
		}
		a.replicas = g.Draw("replicas", g.Ranges.Replicas)
		if g.Chance(0.5) {
			a.image = otherImage(g, a.image)
		}
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Recreate: true, Apply: appDoc(a, a.meta, "") + "\n"})
	case "release":
		if len(g.Held) == 0 {
			return false
		}
		i := g.Rng.IntN(len(g.Held))
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Release: map[string][]string{g.Held[i]: {family.HoldFinalizer}}})
		g.Held = slices.Delete(g.Held, i, i+1)
	case "delete-child":
		a := pick(func(a *app) bool { return !a.gone && a.hold == holdOwn })
		if a == nil {
			return false
		}
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: family.Ref("Deployment", a.ns, a.name)})
	case "free-name":
		a := pick(func(a *app) bool { return a.hold == holdForeign })
		if a == nil {
			return false
		}
		if !a.gone {
			a.hold = holdOwn // the App's timer finds the name free
		} else {
			a.hold = holdNone
		}
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: family.Ref("Deployment", a.ns, a.name)})
	default:
		return false
	}
	g.Hit("step=" + kind)
	return true
}

func (Family) GenKinds() (steps, objects []string) {
	return []string{"image", "scale", "metadata", "create", "take-name", "delete", "recreate", "release", "delete-child", "free-name"},
		[]string{"foreign-deployment", "other-controller", "non-controller-ref", "stale", "terminating-app", "foreign-metadata"}
}

// Ranges: Apps are counted by the deployments range; no Deployment
// strategy is drawn.
func (Family) Ranges() []string { return []string{"deployments", "replicas"} }

// Space: an App whose name is free at the start, and one whose own
// Deployment is in step from the start.
func (Family) Space(gb *exercise.Generate) []string {
	return []string{"start=no-deployment", "start=in-step"}
}
