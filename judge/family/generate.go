package family

import (
	"ctrljudge/judge/exercise"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
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
		"recreate":      "delete a Deployment, then create one of the same name (a new object, a new UID)",
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
		"tamper":        "someone edits by hand what the controller keeps (a template's config-hash)",
		"delete-child":  "someone deletes the Deployment an App owns",
		"free-name":     "the owner of a Deployment in an App's way deletes it",
		"take-name":     "someone creates a Deployment under a new App's name while the controller is busy, just before its create",
		"deadline":      "change a Deployment's progressDeadlineSeconds",
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
		"foreign-deployment":     "a Deployment under an App's name with no owner",
		"other-controller":       "a Deployment under an App's name that another object controls",
		"non-controller-ref":     "a Deployment under an App's name whose owner reference to the App is not a controller reference",
		"terminating-app":        "an App being deleted, held by another controller's finalizer",
	}
)

// A Generator draws the scenarios of one family: the step and object
// kinds it supports, a world, and workload steps.
type Generator interface {
	GenKinds() (steps, objects []string)
	GenWorld(g *Gen)
	GenStep(g *Gen, kind string) bool // false: nothing to do for this kind now
}

// A Ranger names the ranges of a generate: block (deployments, replicas,
// maxSurge, maxUnavailable) its generator draws, where it draws fewer
// than all of them: a range no scenario draws is no point of the input
// space.
type Ranger interface {
	Ranges() []string
}

// A Spacer declares the points of the input space its generator reaches
// beyond those every generate: block has (ranges, images, namespaces,
// step, object and fault kinds): its own dimensions and identities, as
// Gen.Hit names them.
type Spacer interface {
	Space(gb *exercise.Generate) []string
}

// PodSpace are the points of a Deployment-and-Pod world: a Deployment
// with no Pod, with one, and with as many as it may have; and, where
// foreign Pods are drawn, a Pod with several owners.
func PodSpace(gb *exercise.Generate) []string {
	out := []string{"pods=none", "pods=one", "pods=most"}
	if slices.Contains(gb.ObjectKinds, "foreign-pod") {
		out = append(out, "identity=several-owners")
	}
	return out
}

// The step and object kinds of the Deployment-and-Pod worlds (podWorld,
// podStep).
var (
	PodSteps   = []string{"scale", "image", "metadata", "meanwhile", "delete", "create", "recreate", "release", "delete-pod", "fail-pod"}
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
	// Force are the object kinds this scenario puts wherever one may go:
	// scenario i of K is about the i-th object kind of the generate:
	// block, and about the (i+K)-th, so that every seed's K scenarios
	// cover up to 2K kinds.
	Force []string
	// Index is the scenario's number, from 1, and Turn a number drawn
	// once for all the scenarios of a seed: together they decide which
	// scenario takes which end of each range first (Edge).
	Index, Turn int
	// Reached are the points of the input space this scenario reached
	// ("replicas=0", "namespace=shop", "identity=same-name"): what the
	// coverage report counts (Space).
	Reached map[string]bool
	drawn   map[string]bool // dimensions drawn so far
	// Finalizers says the controller holds each Deployment by a finalizer
	// of its own, so deleting one takes its time.
	Finalizers bool
	// State is a family's own record of the scenario so far, for a
	// generator whose world is not Deployments and Pods: what GenWorld
	// drew, for GenStep to go on from.
	State any
}

// Hit records that the scenario reached a point of the input space.
func (g *Gen) Hit(point string) {
	if g.Reached == nil {
		g.Reached = map[string]bool{}
	}
	g.Reached[point] = true
}

// Draw draws a value of dimension dim ("replicas") from r, boundaries
// first (Edge): of every four scenarios in a row, one takes the low end at
// the dimension's first draw and another the high end, so that each
// seed's first four scenarios reach both; every other draw takes either
// end a quarter of the time each and a value between them otherwise.
func (g *Gen) Draw(dim string, r exercise.Range) int {
	v := g.draw(dim, r)
	g.Hit(RangePoint(dim, r, v))
	return v
}

// draw is Draw without recording the point.
func (g *Gen) draw(dim string, r exercise.Range) int {
	lo, hi := r[0], max(r[0], r[1])
	low, high := g.Edge(dim)
	x := g.Rng.IntN(4)
	switch {
	case low, !high && x == 0:
		return lo
	case high, x == 1:
		return hi
	}
	return lo + g.Rng.IntN(hi-lo+1)
}

// Edge says, at the first ask about dimension dim in a scenario, whether
// the scenario takes its low end or its high end, boundaries first: of
// every four scenarios in a row, one takes the low end and another the
// high end, which ones depending on the dimension and the seed, so that
// no scenario takes every low end and no pairing of one dimension's end
// with another's holds at every seed. Later asks get neither.
func (g *Gen) Edge(dim string) (low, high bool) {
	if g.drawn == nil {
		g.drawn = map[string]bool{}
	}
	if g.drawn[dim] {
		return false, false
	}
	g.drawn[dim] = true
	at := (g.Index - 1 + g.Turn + int(fnv32(dim)%4)) % 4
	return at == 0, at == 1
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// RangePoint names the point of range r that v is: its low end, its high
// end, or (for a range of three values or more) somewhere between.
func RangePoint(dim string, r exercise.Range, v int) string {
	lo, hi := r[0], max(r[0], r[1])
	switch {
	case v == lo:
		return dim + "=" + strconv.Itoa(lo)
	case v == hi:
		return dim + "=" + strconv.Itoa(hi)
	}
	return dim + "=" + strconv.Itoa(lo+1) + ".." + strconv.Itoa(hi-1)
}

// PickOf draws one of xs as a value of dimension dim and records it.
func (g *Gen) PickOf(dim string, xs []string) string {
	v := g.Pick(xs)
	g.Hit(dim + "=" + v)
	return v
}

// Dep is a Deployment as the generator last left it.
type Dep struct {
	NS, Name       string
	replicas       int
	Tag            string
	surge, unavail int
	Gone           bool // deleted (perhaps still held)
	Config         string
	Finalizer      bool   // carries its family's finalizer
	Meta           string // metadata lines of its manifest that a copy created again keeps
	pods           int    // Pods seeded for it
}

func (g *Gen) has(kind string) bool { return slices.Contains(g.Ranges.ObjectKinds, kind) }

// Forced says whether this scenario is about object kind kind.
func (g *Gen) Forced(kind string) bool { return slices.Contains(g.Force, kind) }

// Want draws whether to add an object of kind where one may go: with
// chance p, or always for the kind this scenario is about.
func (g *Gen) Want(kind string, p float64) bool {
	ok := g.has(kind) && (g.Forced(kind) || g.Chance(p))
	if ok {
		g.Hit("object=" + kind)
	}
	return ok
}

func (g *Gen) Chance(p float64) bool { return g.Rng.Float64() < p }

func (g *Gen) Pick(xs []string) string { return xs[g.Rng.IntN(len(xs))] }

func (g *Gen) Add(doc string, a ...any) {
	g.Docs = append(g.Docs, strings.TrimSpace(fmt.Sprintf(doc, a...)))
}

// Ref names the Deployment in a step: "Deployment/web", or
// "Deployment/shop/web" outside the default namespace.
func (d *Dep) Ref() string { return Ref("Deployment", d.NS, d.Name) }

// Ref names an object in a step.
func Ref(kind, ns, name string) string {
	if ns == "" || ns == "default" {
		return kind + "/" + name
	}
	return kind + "/" + ns + "/" + name
}

// Image is the image its template runs: NAME:TAG, or none at all (a
// template may leave it to whatever fills it in later) when Tag is "".
func (d *Dep) Image() string {
	if d.Tag == "" {
		return ""
	}
	return d.Name + ":" + d.Tag
}

// Key is the Deployment's namespace/name.
func (d *Dep) Key() string { return d.NS + "/" + d.Name }

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
	return g.PickOf("image", others)
}

// DepNames are the names a Deployment may take; "web" and "web-canary"
// are there so that a Pod of one starts with the other's name and a dash.
var DepNames = []string{"web", "api", "web-canary", "db", "cache"}

// identity draws the namespace and name of a new Deployment: a name no
// Deployment has had in that namespace, and now and then one that a
// Deployment in another namespace has. ok is false when every name is
// taken.
func (g *Gen) identity() (ns, name string, ok bool) {
	had := make([][2]string, len(g.Deps))
	for i, d := range g.Deps {
		had[i] = [2]string{d.NS, d.Name}
	}
	return g.DrawIdentity(DepNames, had)
}

// DrawIdentity draws a namespace (of the ranges') and a name (of names)
// for a new object of a scenario whose objects of that kind have had the
// identities had, and records the identities it reached. Boundaries come
// first: the first object lives in the first namespace or (in another
// scenario) the last; the second takes a name the first has in another
// namespace where it can, and later ones now and then. ok is false when
// every name is taken.
func (g *Gen) DrawIdentity(names []string, had [][2]string) (ns, name string, ok bool) {
	nss := g.Ranges.Namespaces
	if len(nss) == 0 {
		nss = []string{"default"}
	}
	var same, fresh [][2]string
	for _, n := range names {
		elsewhere := slices.ContainsFunc(had, func(h [2]string) bool { return h[1] == n })
		for _, x := range nss {
			switch {
			case slices.Contains(had, [2]string{x, n}):
			case elsewhere:
				same = append(same, [2]string{x, n})
			default:
				fresh = append(fresh, [2]string{x, n})
			}
		}
	}
	var c [2]string
	var sameFirst bool
	if len(had) == 1 {
		_, sameFirst = g.Edge("identity")
	}
	switch {
	case len(same) > 0 && (len(fresh) == 0 || sameFirst || g.Chance(0.3)):
		c = same[g.Rng.IntN(len(same))]
		g.Hit("identity=same-name-other-namespace")
	case len(fresh) > 0:
		if len(had) == 0 {
			want := nss[0]
			if _, last := g.Edge("first-namespace"); last {
				want = nss[len(nss)-1]
			}
			fresh = slices.DeleteFunc(fresh, func(x [2]string) bool { return x[0] != want })
		}
		c = fresh[g.Rng.IntN(len(fresh))]
	default:
		return "", "", false
	}
	for _, h := range had {
		if strings.HasPrefix(c[1], h[1]+"-") || strings.HasPrefix(h[1], c[1]+"-") {
			g.Hit("identity=name-prefix")
		}
	}
	g.Hit("namespace=" + c[0])
	return c[0], c[1], true
}

// deployment renders a Deployment manifest. meta is extra metadata lines.
func DeploymentDoc(d *Dep, meta, templateMeta string) string {
	return fmt.Sprintf(`kind: Deployment
apiVersion: apps/v1
metadata:
  name: %s%s%s
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata:
      labels: {app: %s}%s
    spec:
      containers: [{name: %s, image: "%s"}]
  strategy: {rollingUpdate: {maxSurge: %d, maxUnavailable: %d}}`, d.Name, NamespaceLine(d.NS), meta, d.replicas, d.Name, d.Name, templateMeta,
		d.Name, d.Image(), d.surge, d.unavail)
}

// NamespaceLine is a manifest's namespace line, none for default.
func NamespaceLine(ns string) string {
	if ns == "" || ns == "default" {
		return ""
	}
	return "\n  namespace: " + ns
}

// podDoc renders a Pod with app label app in namespace ns. owner is an
// ownerReferences entry or ""; status is a status line or "".
func podDoc(ns, name, app, image, meta, owner, status string) string {
	s := "kind: Pod\napiVersion: v1\nmetadata:\n  name: " + name + NamespaceLine(ns) + "\n  labels: {app: " + app + "}" + meta
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

// NewDep draws a Deployment with the ranges' replicas, image and
// strategy, a namespace and a name no Deployment of the scenario has had
// there; nil when every name is taken. The caller adds it to g.Deps.
func (g *Gen) NewDep() *Dep {
	ns, name, ok := g.identity()
	if !ok {
		return nil
	}
	// A scenario about a kind of Pod gives its Deployments a replica to
	// decide about.
	rr := g.Ranges.Replicas
	if slices.ContainsFunc(podKinds, g.Forced) {
		rr[0] = min(max(rr[0], 1), max(rr[0], rr[1]))
	}
	replicas := g.draw("replicas", rr)
	g.Hit(RangePoint("replicas", g.Ranges.Replicas, replicas))
	d := &Dep{NS: ns, Name: name, replicas: replicas, Tag: g.PickOf("image", g.Ranges.Images),
		surge: g.Draw("maxSurge", g.Ranges.MaxSurge), unavail: g.Draw("maxUnavailable", g.Ranges.MaxUnavailable)}
	if d.surge == 0 && d.unavail == 0 {
		d.surge = 1 // a rollout needs room to move
	}
	return d
}

// Deployments draws how many Deployments the world starts with.
func (g *Gen) Deployments() int { return g.Draw("deployments", g.Ranges.Deployments) }

// PodWorld is the world of 171 and 172: Deployments and Pods, some of
// them not the Deployment's to count or to touch.
func PodWorld(g *Gen, status bool) {
	n := g.Deployments()
	for i := 0; i < n; i++ {
		d := g.NewDep()
		if d == nil {
			break
		}
		g.Deps = append(g.Deps, d)
		meta, tmeta := "", ""
		if g.Want("foreign-metadata", 0.5) {
			meta = "\n  labels: {team: shop}\n  annotations: {example.com/note: keep-me}"
			tmeta = "\n      annotations: {example.com/scrape: \"true\"}"
		}
		if i > 0 && g.Want("terminating-deployment", 0.3) {
			meta += HeldMeta
			d.Gone = true
			g.Held = append(g.Held, d.Ref())
		}
		g.Add("%s", DeploymentDoc(d, meta, tmeta))
		// Its Pods, named so they sort before the server's names: none,
		// one, or as many as the Deployment may have at most.
		most := d.replicas + 1
		if !status {
			most = d.replicas + d.surge
		}
		least := 0
		switch {
		case g.Forced("failed-pod") && most >= 2:
			least = 2 // failed Pods, and a first and a last of them
		case slices.ContainsFunc(podKinds, g.Forced):
			least = 1 // the scenario is about a kind of Pod: it has one
		}
		pods := g.draw("pods", exercise.Range{least, most})
		switch pods {
		case 0:
			g.Hit("pods=none")
		case 1:
			g.Hit("pods=one")
		}
		if pods == most {
			g.Hit("pods=most")
		}
		// Where the scenario is about several kinds of Pod, its Pods take
		// them in turn.
		var fp []string
		for _, k := range podKinds {
			if g.Forced(k) && g.has(k) {
				fp = append(fp, k)
			}
		}
		for j := 0; j < pods; j++ {
			want := g.Want
			if len(fp) > 1 {
				want = func(kind string, p float64) bool {
					if !slices.Contains(fp, kind) {
						return g.Want(kind, p)
					}
					if kind == fp[j%len(fp)] {
						g.Hit("object=" + kind)
						return true
					}
					return false
				}
			}
			tag := d.Tag
			if g.Want("stale", 0.3) {
				tag = g.OtherTag(d.Tag)
				if others := slices.DeleteFunc(slices.Clone(g.Ranges.Images), func(t string) bool { return t == d.Tag }); g.Forced("stale") && len(others) > 1 {
					// Old Pods of several old images at once.
					tag = others[j%len(others)]
				}
			}
			st, pmeta := statusReady, ""
			if g.Want("foreign-metadata", 0.3) {
				pmeta = foreignMeta
			}
			name := fmt.Sprintf("%s-0%c", d.Name, 'a'+j)
			owner := ownerOf(d.Name)
			switch {
			case status && want("unready-pod", 0.25):
				st = statusUnready
			case status && want("pending-pod", 0.15):
				st = statusPending
			case want("failed-pod", 0.1):
				st = statusFailed
			case want("terminating-pod", 0.2):
				pmeta += HeldMeta
				g.Held = append(g.Held, Ref("Pod", d.NS, name))
			case g.Want("foreign-pod", 0.2):
				// Another object owns it too, without controlling it, and
				// comes first in its owner references.
				g.batch(d.NS)
				owner = batchOwner(false) + ", " + owner
				g.Hit("identity=several-owners")
			}
			g.Add("%s", podDoc(d.NS, name, d.Name, d.Name+":"+tag, pmeta, owner, st))
			d.pods++
		}
		// Pods with its labels that are not its own: they sort first.
		if g.Want("orphan-pod", 0.5) {
			g.Add("%s", podDoc(d.NS, d.Name+"-0-stray", d.Name, d.Name+":"+d.Tag, "", "", statusReady))
		}
		if g.Want("foreign-pod", 0.5) {
			g.batch(d.NS)
			g.Add("%s", podDoc(d.NS, d.Name+"-0-batch", d.Name, d.Name+":"+d.Tag, "", batchOwner(true), statusReady))
		}
	}
}

// podKinds are the object kinds that are kinds of Pod a Deployment owns.
var podKinds = []string{"terminating-pod", "unready-pod", "pending-pod", "failed-pod"}

// batch adds, once per namespace, the ConfigMap that owns foreign Pods.
func (g *Gen) batch(ns string) {
	if !g.ConfigMaps[ns+"/batch"] {
		g.ConfigMaps[ns+"/batch"] = true
		g.Add("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: batch%s\ndata: {}", NamespaceLine(ns))
	}
}

func batchOwner(controller bool) string {
	return "{apiVersion: v1, kind: ConfigMap, name: batch, controller: " + strconv.FormatBool(controller) + "}"
}

// PodStep draws one workload step of the 171 and 172 families.
func PodStep(g *Gen, kind string) bool {
	live := g.Live()
	var d *Dep
	if len(live) > 0 {
		d = live[g.Rng.IntN(len(live))]
	}
	switch kind {
	case "scale":
		if d == nil {
			return false
		}
		d.replicas = g.Draw("replicas", g.Ranges.Replicas)
		g.StepPatch(d.Ref(), map[string]any{"spec": map[string]any{"replicas": d.replicas}})
	case "image":
		if d == nil {
			return false
		}
		d.Tag = g.OtherTag(d.Tag)
		g.StepPatch(d.Ref(), map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
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
			g.Test.Steps = append(g.Test.Steps, exercise.Step{Meanwhile: map[string]map[string]any{d.Ref(): p}})
		} else {
			g.StepPatch(d.Ref(), p)
		}
	case "delete":
		if d == nil || len(live) < 2 {
			return false
		}
		d.Gone = true
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: d.Ref()})
	case "recreate":
		// Deleted, then created again under the same name: a new object
		// (a new UID) that only its name shares with the old one.
		if d == nil {
			return false
		}
		// The new one may ask for fewer Pods, or another image, than the
		// old one had.
		d.replicas = g.Draw("replicas", g.Ranges.Replicas)
		if g.Chance(0.5) {
			d.Tag = g.OtherTag(d.Tag)
		}
		d.pods, d.Finalizer = 0, false
		if g.Finalizers {
			// The controller holds each Deployment by a finalizer: the old
			// one goes once it lets go, and the new one comes after.
			g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: d.Ref()},
				exercise.Step{Apply: DeploymentDoc(d, d.Meta, "") + "\n"})
		} else {
			// At once: the new one's first event may come before the
			// garbage collector has removed the old one's Pods.
			g.Test.Steps = append(g.Test.Steps, exercise.Step{Recreate: true, Apply: DeploymentDoc(d, d.Meta, "") + "\n"})
		}
	case "create":
		nd := g.NewDep()
		if nd == nil {
			return false
		}
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
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: podDoc(d.NS, name, d.Name, d.Name+":"+d.Tag, "", ownerOf(d.Name), "") + "\n"})
	default:
		return false
	}
	g.Hit("step=" + kind)
	return true
}
