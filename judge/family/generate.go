package family

import (
	"ctrljudge/judge/exercise"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// What a scenario may contain. Each family supports some of them.
var (
	GenStepKinds = map[string]string{
		"scale":         "change a Deployment's replicas",
		"image":         "change a Deployment's template image",
		"metadata":      "change a Deployment's labels or annotations only (its generation stays)",
		"meanwhile":     "another actor edits a Deployment's labels while the controller is busy",
		"delete":        "delete a Deployment",
		"create":        "create a Deployment",
		"release":       "another controller lets go of an object it held by a finalizer",
		"delete-pod":    "delete a Pod",
		"fail-pod":      "make a Pod fail",
		"create-pod":    "create a Pod for a Deployment",
		"unready":       "make a Ready Pod unready",
		"ready":         "make an unready Pod Ready again",
		"config-edit":   "change a ConfigMap's data",
		"config-delete": "delete a ConfigMap",
		"config-create": "create a ConfigMap",
		"repoint":       "make a Deployment name another ConfigMap",
	}
	GenObjectKinds = map[string]string{
		"terminating-pod":        "a Pod being deleted, held by another controller's finalizer",
		"terminating-deployment": "a Deployment being deleted, held by another controller's finalizer",
		"orphan-pod":             "a Pod with a Deployment's labels and no owner",
		"foreign-pod":            "a Pod with a Deployment's labels, owned by something else",
		"unready-pod":            "a Pod that runs but is not Ready",
		"pending-pod":            "a Pod not yet running",
		"failed-pod":             "a Pod that failed",
		"foreign-metadata":       "labels, annotations and finalizers of other controllers",
		"stale":                  "a state the controller must repair (an old image, a wrong hash, a missing entry)",
	}
)

// A Generator draws the scenarios of one family: the step and object
// kinds it supports, a world, and workload steps.
type Generator interface {
	GenKinds() (steps, objects []string)
	GenWorld(g *Gen)
	GenStep(g *Gen, kind string) bool // false: nothing to do for this kind now
}

// The step and object kinds of the Deployment-and-Pod worlds (podWorld,
// podStep).
var (
	PodSteps   = []string{"scale", "image", "metadata", "meanwhile", "delete", "create", "release", "delete-pod", "fail-pod"}
	PodObjects = []string{"terminating-pod", "terminating-deployment", "orphan-pod", "foreign-pod", "failed-pod", "foreign-metadata", "stale"}
)

// Described lists kinds with what each means.
func Described(kinds []string, words map[string]string) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + " (" + words[k] + ")"
	}
	return strings.Join(parts, ", ")
}

// Gen is one scenario being drawn: the world as the steps will leave it
// (as far as the generator can know without the controller), and the
// test's text.
type Gen struct {
	Rng        *rand.Rand
	Ranges     *exercise.Generate
	Docs       []string // manifests of the initial objects
	Test       *exercise.Test
	Deps       []*Dep
	Held       []string            // Kind/name of objects held by example.com/hold
	ConfigMaps map[string]bool     // the ConfigMaps that exist, by name
	ConfigData map[string][]string // each ConfigMap's keys and values, in turn
	n          int                 // new names drawn so far
	// Force is the object kind this scenario puts wherever one may go:
	// scenario i is about the i-th object kind of the generate: block, so
	// that every seed's scenarios cover the first K kinds.
	Force string
}

// Dep is a Deployment as the generator last left it.
type Dep struct {
	Name           string
	replicas       int
	Tag            string
	surge, unavail int
	Gone           bool // deleted (perhaps still held)
	Config         string
	Finalizer      bool // carries its family's finalizer
	pods           int  // Pods seeded for it
}

func (g *Gen) has(kind string) bool { return slices.Contains(g.Ranges.ObjectKinds, kind) }

// Want draws whether to add an object of kind where one may go: with
// chance p, or always for the kind this scenario is about.
func (g *Gen) Want(kind string, p float64) bool {
	return g.has(kind) && (kind == g.Force || g.Chance(p))
}

func (g *Gen) Chance(p float64) bool { return g.Rng.Float64() < p }

func (g *Gen) Pick(xs []string) string { return xs[g.Rng.IntN(len(xs))] }

func (g *Gen) Add(doc string, a ...any) {
	g.Docs = append(g.Docs, strings.TrimSpace(fmt.Sprintf(doc, a...)))
}

func (g *Gen) Live() []*Dep {
	return slices.DeleteFunc(slices.Clone(g.Deps), func(d *Dep) bool { return d.Gone })
}

func (g *Gen) StepPatch(ref string, p map[string]any) {
	g.Test.Steps = append(g.Test.Steps, exercise.Step{Patch: map[string]map[string]any{ref: p}})
}

// OtherTag draws an image tag other than tag.
func (g *Gen) OtherTag(tag string) string {
	var others []string
	for _, t := range g.Ranges.Images {
		if t != tag {
			others = append(others, t)
		}
	}
	if len(others) == 0 {
		return tag
	}
	return g.Pick(others)
}

var DepNames = []string{"web", "api", "db", "cache", "queue"}

// deployment renders a Deployment manifest. meta is extra metadata lines.
func DeploymentDoc(d *Dep, meta, templateMeta string) string {
	return fmt.Sprintf(`kind: Deployment
apiVersion: apps/v1
metadata:
  name: %s%s
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata:
      labels: {app: %s}%s
    spec:
      containers: [{name: %s, image: "%s:%s"}]
  strategy: {rollingUpdate: {maxSurge: %d, maxUnavailable: %d}}`, d.Name, meta, d.replicas, d.Name, d.Name, templateMeta,
		d.Name, d.Name, d.Tag, d.surge, d.unavail)
}

// podDoc renders a Pod with app label app. owner is an ownerReferences
// entry or ""; status is a status line or "".
func podDoc(name, app, image, meta, owner, status string) string {
	s := "kind: Pod\napiVersion: v1\nmetadata:\n  name: " + name + "\n  labels: {app: " + app + "}" + meta
	if owner != "" {
		s += "\n  ownerReferences: [" + owner + "]"
	}
	s += "\nspec:\n  containers: [{name: " + app + ", image: \"" + image + "\"}]"
	if status != "" {
		s += "\nstatus: " + status
	}
	return s
}

const (
	statusReady   = `{phase: Running, conditions: [{type: Ready, status: "True"}]}`
	statusUnready = `{phase: Running, conditions: [{type: Ready, status: "False"}]}`
	statusPending = `{phase: Pending}`
	statusFailed  = `{phase: Failed, conditions: [{type: Ready, status: "False"}]}`
	// heldMeta marks an object being deleted, held by another controller.
	HoldFinalizer = "example.com/hold"
	HeldMeta      = "\n  finalizers: [" + HoldFinalizer + "]\n  deletionTimestamp: \"2026-01-01T00:00:00Z\""
	foreignMeta   = "\n  annotations: {example.com/note: keep-me}"
)

func ownerOf(d string) string { return "{kind: Deployment, name: " + d + ", controller: true}" }

// NewDep draws a Deployment with the ranges' replicas, image and strategy.
func (g *Gen) NewDep(name string) *Dep {
	d := &Dep{Name: name, replicas: g.Ranges.Replicas.Draw(g.Rng), Tag: g.Pick(g.Ranges.Images),
		surge: g.Ranges.MaxSurge.Draw(g.Rng), unavail: g.Ranges.MaxUnavailable.Draw(g.Rng)}
	if d.surge == 0 && d.unavail == 0 {
		d.surge = 1 // a rollout needs room to move
	}
	return d
}

// PodWorld is the world of 171 and 172: Deployments and Pods, some of
// them not the Deployment's to count or to touch.
func PodWorld(g *Gen, status bool) {
	n := g.Ranges.Deployments.Draw(g.Rng)
	for i := 0; i < n && i < len(DepNames); i++ {
		d := g.NewDep(DepNames[i])
		g.Deps = append(g.Deps, d)
		meta, tmeta := "", ""
		if g.Want("foreign-metadata", 0.5) {
			meta = "\n  labels: {team: shop}\n  annotations: {example.com/note: keep-me}"
			tmeta = "\n      annotations: {example.com/scrape: \"true\"}"
		}
		if i > 0 && g.Want("terminating-deployment", 0.3) {
			meta += HeldMeta
			d.Gone = true
			g.Held = append(g.Held, "Deployment/"+d.Name)
		}
		g.Add("%s", DeploymentDoc(d, meta, tmeta))
		// Its Pods, named so they sort before the server's names.
		pods := g.Rng.IntN(d.replicas + 2)
		if !status && pods > d.replicas+d.surge {
			pods = d.replicas + d.surge
		}
		for j := 0; j < pods; j++ {
			tag := d.Tag
			if g.Want("stale", 0.3) {
				tag = g.OtherTag(d.Tag)
			}
			st, pmeta := statusReady, ""
			if g.Want("foreign-metadata", 0.3) {
				pmeta = foreignMeta
			}
			name := fmt.Sprintf("%s-0%c", d.Name, 'a'+j)
			switch {
			case status && g.Want("unready-pod", 0.25):
				st = statusUnready
			case status && g.Want("pending-pod", 0.15):
				st = statusPending
			case g.Want("failed-pod", 0.1):
				st = statusFailed
			case g.Want("terminating-pod", 0.2):
				pmeta += HeldMeta
				g.Held = append(g.Held, "Pod/"+name)
			}
			g.Add("%s", podDoc(name, d.Name, d.Name+":"+tag, pmeta, ownerOf(d.Name), st))
			d.pods++
		}
		// Pods with its labels that are not its own: they sort first.
		if g.Want("orphan-pod", 0.5) {
			g.Add("%s", podDoc(d.Name+"-0-stray", d.Name, d.Name+":"+d.Tag, "", "", statusReady))
		}
		if g.Want("foreign-pod", 0.5) {
			if !slices.ContainsFunc(g.Docs, func(s string) bool { return strings.Contains(s, "name: batch\n") }) {
				g.Add("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: batch\ndata: {}")
			}
			g.Add("%s", podDoc(d.Name+"-0-batch", d.Name, d.Name+":"+d.Tag, "", "{apiVersion: v1, kind: ConfigMap, name: batch, controller: true}", statusReady))
		}
	}
}

// PodStep draws one workload step of the 171 and 172 families.
func PodStep(g *Gen, kind string) bool {
	live := g.Live()
	var d *Dep
	if len(live) > 0 {
		d = live[g.Rng.IntN(len(live))]
	}
	ref := func() string { return "Deployment/" + d.Name }
	switch kind {
	case "scale":
		if d == nil {
			return false
		}
		d.replicas = g.Ranges.Replicas.Draw(g.Rng)
		g.StepPatch(ref(), map[string]any{"spec": map[string]any{"replicas": d.replicas}})
	case "image":
		if d == nil {
			return false
		}
		d.Tag = g.OtherTag(d.Tag)
		g.StepPatch(ref(), map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": d.Name, "image": d.Name + ":" + d.Tag}}}}}})
	case "metadata", "meanwhile":
		if d == nil {
			return false
		}
		p := map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": g.Pick([]string{"shop", "search", "ads"})}}}
		if g.Chance(0.5) {
			p = map[string]any{"metadata": map[string]any{"annotations": map[string]any{"example.com/owner": g.Pick([]string{"ana", "bo"})}}}
		}
		if kind == "meanwhile" {
			g.Test.Steps = append(g.Test.Steps, exercise.Step{Meanwhile: map[string]map[string]any{ref(): p}})
		} else {
			g.StepPatch(ref(), p)
		}
	case "delete":
		if d == nil || len(live) < 2 {
			return false
		}
		d.Gone = true
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: ref()})
	case "create":
		if len(g.Deps) >= len(DepNames) {
			return false
		}
		nd := g.NewDep(DepNames[len(g.Deps)])
		g.Deps = append(g.Deps, nd)
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: DeploymentDoc(nd, "", "") + "\n"})
	case "release":
		if len(g.Held) == 0 {
			return false
		}
		i := g.Rng.IntN(len(g.Held))
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Release: map[string][]string{g.Held[i]: {HoldFinalizer}}})
		g.Held = slices.Delete(g.Held, i, i+1)
	case "delete-pod":
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: "Pod/random"})
	case "fail-pod":
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Fail: "Pod/random"})
	case "unready":
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Unready: "Pod/random"})
	case "ready":
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Ready: g.Pick([]string{"Pod/random", "Pod/all"})})
	case "create-pod":
		if d == nil {
			return false
		}
		g.n++
		name := fmt.Sprintf("%s-new%d", d.Name, g.n)
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: podDoc(name, d.Name, d.Name+":"+d.Tag, "", ownerOf(d.Name), "") + "\n"})
	default:
		return false
	}
	return true
}
