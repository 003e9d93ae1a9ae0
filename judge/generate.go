package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"ctrljudge/judge/verdict"

	"sigs.k8s.io/yaml"
)

// Generated scenarios: besides its named tests, an exercise's submit runs
// K scenarios drawn from the seed (stateful property-based testing). Each
// is an ordinary Test (objects, steps, faults), built as tests.yaml text
// would be, so that the model judges it as it judges the named tests and
// a failing one prints as a test an author can paste. The exercise's
// generate: block sets the ranges; the model's family decides what its
// world holds (genFamilies).

// generatedPrefix names generated scenarios: "generated 1" .. "generated K".
const generatedPrefix = "generated "

// isGeneratedName says whether a test name is kept for a generated scenario.
func isGeneratedName(name string) bool {
	n, ok := strings.CutPrefix(name, generatedPrefix)
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// Generate is an exercise's generate: block, the generator's ranges.
type Generate struct {
	// Scenarios is K, how many scenarios a submit runs.
	Scenarios int `json:"scenarios"`
	// Deployments and Replicas bound the Deployments at the start, and
	// Replicas every scale step.
	Deployments Range `json:"deployments"`
	Replicas    Range `json:"replicas"`
	// MaxSurge and MaxUnavailable bound a Deployment's rollout strategy.
	MaxSurge       Range `json:"maxSurge"`
	MaxUnavailable Range `json:"maxUnavailable"`
	// Images are the image tags drawn ("v1", "v2"): a Deployment web runs web:TAG.
	Images []string `json:"images"`
	// Steps bounds the number of workload steps.
	Steps Range `json:"steps"`
	// StepKinds and ObjectKinds are those a scenario may draw (see
	// genStepKinds and genObjectKinds).
	StepKinds   []string `json:"stepKinds"`
	ObjectKinds []string `json:"objectKinds"`
	// Faults are the classes a scenario may plan, at most MaxFaults of them.
	Faults    []verdict.Fault `json:"faults"`
	MaxFaults int             `json:"maxFaults"`
	// PodReady lists the kubelet modes a scenario may draw (default: soon).
	PodReady []string `json:"podReady"`
}

// Range is [min, max], both included.
type Range [2]int

func (r Range) draw(rng *rand.Rand) int {
	if r[1] <= r[0] {
		return r[0]
	}
	return r[0] + rng.IntN(r[1]-r[0]+1)
}

// What a scenario may contain. Each family supports some of them.
var (
	genStepKinds = map[string]string{
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
	genObjectKinds = map[string]string{
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

// genFamily draws scenarios for one model.
type genFamily struct {
	steps, objects []string // the step and object kinds it supports
	world          func(g *gen)
	step           func(g *gen, kind string) bool // false: nothing to do for this kind now
}

var genFamilies = map[string]*genFamily{}

// check validates a generate: block against its model's family.
func (gb *Generate) check(model string) error {
	f := genFamilies[model]
	if f == nil {
		return fmt.Errorf("generate: model %q has no generator", model)
	}
	if gb.Scenarios < 1 || gb.Scenarios > 20 {
		return fmt.Errorf("generate: scenarios must be 1 to 20")
	}
	for _, k := range gb.StepKinds {
		if !slices.Contains(f.steps, k) {
			return fmt.Errorf("generate: step kind %q is none of the %s model's: %s", k, model, described(f.steps, genStepKinds))
		}
	}
	for _, k := range gb.ObjectKinds {
		if !slices.Contains(f.objects, k) {
			return fmt.Errorf("generate: object kind %q is none of the %s model's: %s", k, model, described(f.objects, genObjectKinds))
		}
	}
	for _, fl := range gb.Faults {
		if !slices.Contains(verdict.Faults, fl) {
			return fmt.Errorf("generate: unknown fault %q", fl)
		}
	}
	for _, m := range gb.PodReady {
		if !slices.Contains(podReadyModes, m) {
			return fmt.Errorf("generate: podReady: %q is none of %s", m, strings.Join(podReadyModes, ", "))
		}
	}
	if len(gb.Images) == 0 {
		gb.Images = []string{"v1", "v2"}
	}
	if gb.Deployments == (Range{}) {
		gb.Deployments = Range{1, 2}
	}
	return nil
}

// described lists kinds with what each means.
func described(kinds []string, words map[string]string) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + " (" + words[k] + ")"
	}
	return strings.Join(parts, ", ")
}

// gen is one scenario being drawn: the world as the steps will leave it
// (as far as the generator can know without the controller), and the
// test's text.
type gen struct {
	rng  *rand.Rand
	cfg  *Generate
	docs []string // manifests of the initial objects
	t    *Test
	deps []*genDep
	held []string            // Kind/name of objects held by example.com/hold
	cms  map[string]bool     // 174: ConfigMaps that exist, by name
	data map[string][]string // 174: each ConfigMap's values
	n    int                 // new names drawn so far
	// force is the object kind this scenario puts wherever one may go:
	// scenario i is about the i-th object kind of the generate: block, so
	// that every seed's scenarios cover the first K kinds.
	force string
}

// genDep is a Deployment as the generator last left it.
type genDep struct {
	name           string
	replicas       int
	tag            string
	surge, unavail int
	gone           bool // deleted (perhaps still held)
	config         string
	finalizer      bool // 173
	pods           int  // 171/172: Pods seeded
}

func (g *gen) has(kind string) bool { return slices.Contains(g.cfg.ObjectKinds, kind) }

// want draws whether to add an object of kind where one may go: with
// chance p, or always for the kind this scenario is about.
func (g *gen) want(kind string, p float64) bool {
	return g.has(kind) && (kind == g.force || g.chance(p))
}

func (g *gen) chance(p float64) bool   { return g.rng.Float64() < p }
func (g *gen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }
func (g *gen) add(doc string, a ...any) {
	g.docs = append(g.docs, strings.TrimSpace(fmt.Sprintf(doc, a...)))
}
func (g *gen) live() []*genDep {
	return slices.DeleteFunc(slices.Clone(g.deps), func(d *genDep) bool { return d.gone })
}
func (g *gen) stepPatch(ref string, p map[string]any) {
	g.t.Steps = append(g.t.Steps, Step{Patch: map[string]map[string]any{ref: p}})
}

// otherTag draws an image tag other than tag.
func (g *gen) otherTag(tag string) string {
	var others []string
	for _, t := range g.cfg.Images {
		if t != tag {
			others = append(others, t)
		}
	}
	if len(others) == 0 {
		return tag
	}
	return g.pick(others)
}

var depNames = []string{"web", "api", "db", "cache", "queue"}

// generateTest draws scenario i, named name ("generated i"), of an
// exercise from the submission's seed.
func generateTest(s *Suite, i int, name string, seed uint64) *Test {
	x := testSeed(seed, "generate/"+name)
	g := &gen{rng: rand.New(rand.NewPCG(x, x^0x6a09e667f3bcc909)), cfg: s.Generate,
		t: &Test{Name: name, SkipMissing: true, generated: true}, cms: map[string]bool{}, data: map[string][]string{}}
	f := genFamilies[s.Model]
	if k := g.cfg.ObjectKinds; len(k) > 0 {
		g.force = k[(i-1)%len(k)]
	}
	if len(g.cfg.PodReady) > 0 {
		if m := g.pick(g.cfg.PodReady); m != readySoon {
			g.t.PodReady = m
		}
	}
	f.world(g)
	g.t.Objects = strings.Join(g.docs, "\n---\n") + "\n"
	n := g.cfg.Steps.draw(g.rng)
	for tries := 0; len(g.t.Steps) < n && tries < 4*n && len(g.cfg.StepKinds) > 0; tries++ {
		f.step(g, g.pick(g.cfg.StepKinds))
	}
	var faults []verdict.Fault
	for _, fl := range verdict.Faults { // in a fixed order
		if slices.Contains(g.cfg.Faults, fl) && len(faults) < g.cfg.MaxFaults && g.chance(0.4) {
			faults = append(faults, fl)
		}
	}
	g.t.Faults = faults
	if err := g.t.parse(); err != nil {
		// A generator's own bug: say so plainly rather than judge with it.
		panic("generated scenario " + name + " does not parse: " + err.Error() + "\n" + g.t.YAML())
	}
	return g.t
}

// generatedTests are a submission's K scenarios, or the one named only.
func generatedTests(s *Suite, seed uint64, only string) []*Test {
	if s.Generate == nil {
		return nil
	}
	var out []*Test
	for i := 1; i <= s.Generate.Scenarios; i++ {
		name := generatedPrefix + strconv.Itoa(i)
		if only == "" || only == name {
			out = append(out, generateTest(s, i, name, seed))
		}
	}
	return out
}

// ---- what the Deployment families' worlds are made of

// deployment renders a Deployment manifest. meta is extra metadata lines.
func deploymentDoc(d *genDep, meta, templateMeta string) string {
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
  strategy: {rollingUpdate: {maxSurge: %d, maxUnavailable: %d}}`, d.name, meta, d.replicas, d.name, d.name, templateMeta,
		d.name, d.name, d.tag, d.surge, d.unavail)
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
	holdFinalizer = "example.com/hold"
	heldMeta      = "\n  finalizers: [" + holdFinalizer + "]\n  deletionTimestamp: \"2026-01-01T00:00:00Z\""
	foreignMeta   = "\n  annotations: {example.com/note: keep-me}"
)

func ownerOf(d string) string { return "{kind: Deployment, name: " + d + ", controller: true}" }

// newDep draws a Deployment with the ranges' replicas, image and strategy.
func (g *gen) newDep(name string) *genDep {
	d := &genDep{name: name, replicas: g.cfg.Replicas.draw(g.rng), tag: g.pick(g.cfg.Images),
		surge: g.cfg.MaxSurge.draw(g.rng), unavail: g.cfg.MaxUnavailable.draw(g.rng)}
	if d.surge == 0 && d.unavail == 0 {
		d.surge = 1 // a rollout needs room to move
	}
	return d
}

// podWorld is the world of 171 and 172: Deployments and Pods, some of
// them not the Deployment's to count or to touch.
func podWorld(g *gen, status bool) {
	n := g.cfg.Deployments.draw(g.rng)
	for i := 0; i < n && i < len(depNames); i++ {
		d := g.newDep(depNames[i])
		g.deps = append(g.deps, d)
		meta, tmeta := "", ""
		if g.want("foreign-metadata", 0.5) {
			meta = "\n  labels: {team: shop}\n  annotations: {example.com/note: keep-me}"
			tmeta = "\n      annotations: {example.com/scrape: \"true\"}"
		}
		if i > 0 && g.want("terminating-deployment", 0.3) {
			meta += heldMeta
			d.gone = true
			g.held = append(g.held, "Deployment/"+d.name)
		}
		g.add("%s", deploymentDoc(d, meta, tmeta))
		// Its Pods, named so they sort before the server's names.
		pods := g.rng.IntN(d.replicas + 2)
		if !status && pods > d.replicas+d.surge {
			pods = d.replicas + d.surge
		}
		for j := 0; j < pods; j++ {
			tag := d.tag
			if g.want("stale", 0.3) {
				tag = g.otherTag(d.tag)
			}
			st, pmeta := statusReady, ""
			if g.want("foreign-metadata", 0.3) {
				pmeta = foreignMeta
			}
			name := fmt.Sprintf("%s-0%c", d.name, 'a'+j)
			switch {
			case status && g.want("unready-pod", 0.25):
				st = statusUnready
			case status && g.want("pending-pod", 0.15):
				st = statusPending
			case g.want("failed-pod", 0.1):
				st = statusFailed
			case g.want("terminating-pod", 0.2):
				pmeta += heldMeta
				g.held = append(g.held, "Pod/"+name)
			}
			g.add("%s", podDoc(name, d.name, d.name+":"+tag, pmeta, ownerOf(d.name), st))
			d.pods++
		}
		// Pods with its labels that are not its own: they sort first.
		if g.want("orphan-pod", 0.5) {
			g.add("%s", podDoc(d.name+"-0-stray", d.name, d.name+":"+d.tag, "", "", statusReady))
		}
		if g.want("foreign-pod", 0.5) {
			if !slices.ContainsFunc(g.docs, func(s string) bool { return strings.Contains(s, "name: batch\n") }) {
				g.add("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: batch\ndata: {}")
			}
			g.add("%s", podDoc(d.name+"-0-batch", d.name, d.name+":"+d.tag, "", "{apiVersion: v1, kind: ConfigMap, name: batch, controller: true}", statusReady))
		}
	}
}

// podStep draws one workload step of the 171 and 172 families.
func podStep(g *gen, kind string) bool {
	live := g.live()
	var d *genDep
	if len(live) > 0 {
		d = live[g.rng.IntN(len(live))]
	}
	ref := func() string { return "Deployment/" + d.name }
	switch kind {
	case "scale":
		if d == nil {
			return false
		}
		d.replicas = g.cfg.Replicas.draw(g.rng)
		g.stepPatch(ref(), map[string]any{"spec": map[string]any{"replicas": d.replicas}})
	case "image":
		if d == nil {
			return false
		}
		d.tag = g.otherTag(d.tag)
		g.stepPatch(ref(), map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": d.name, "image": d.name + ":" + d.tag}}}}}})
	case "metadata", "meanwhile":
		if d == nil {
			return false
		}
		p := map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": g.pick([]string{"shop", "search", "ads"})}}}
		if g.chance(0.5) {
			p = map[string]any{"metadata": map[string]any{"annotations": map[string]any{"example.com/owner": g.pick([]string{"ana", "bo"})}}}
		}
		if kind == "meanwhile" {
			g.t.Steps = append(g.t.Steps, Step{Meanwhile: map[string]map[string]any{ref(): p}})
		} else {
			g.stepPatch(ref(), p)
		}
	case "delete":
		if d == nil || len(live) < 2 {
			return false
		}
		d.gone = true
		g.t.Steps = append(g.t.Steps, Step{Delete: ref()})
	case "create":
		if len(g.deps) >= len(depNames) {
			return false
		}
		nd := g.newDep(depNames[len(g.deps)])
		g.deps = append(g.deps, nd)
		g.t.Steps = append(g.t.Steps, Step{Apply: deploymentDoc(nd, "", "") + "\n"})
	case "release":
		if len(g.held) == 0 {
			return false
		}
		i := g.rng.IntN(len(g.held))
		g.t.Steps = append(g.t.Steps, Step{Release: map[string][]string{g.held[i]: {holdFinalizer}}})
		g.held = slices.Delete(g.held, i, i+1)
	case "delete-pod":
		g.t.Steps = append(g.t.Steps, Step{Delete: "Pod/random"})
	case "fail-pod":
		g.t.Steps = append(g.t.Steps, Step{Fail: "Pod/random"})
	case "unready":
		g.t.Steps = append(g.t.Steps, Step{Unready: "Pod/random"})
	case "ready":
		g.t.Steps = append(g.t.Steps, Step{Ready: g.pick([]string{"Pod/random", "Pod/all"})})
	case "create-pod":
		if d == nil {
			return false
		}
		g.n++
		name := fmt.Sprintf("%s-new%d", d.name, g.n)
		g.t.Steps = append(g.t.Steps, Step{Apply: podDoc(name, d.name, d.name+":"+d.tag, "", ownerOf(d.name), "") + "\n"})
	default:
		return false
	}
	return true
}

func init() {
	podSteps := []string{"scale", "image", "metadata", "meanwhile", "delete", "create", "release", "delete-pod", "fail-pod"}
	podObjects := []string{"terminating-pod", "terminating-deployment", "orphan-pod", "foreign-pod", "failed-pod", "foreign-metadata", "stale"}
	genFamilies["deployment"] = &genFamily{steps: podSteps, objects: podObjects,
		world: func(g *gen) { podWorld(g, false) }, step: podStep}
	genFamilies["deployment-status"] = &genFamily{
		steps:   append(slices.Clone(podSteps), "unready", "ready", "create-pod"),
		objects: append(slices.Clone(podObjects), "unready-pod", "pending-pod"),
		world:   func(g *gen) { podWorld(g, true) }, step: podStep}
}

// ---- printing

// YAML renders the test as a tests.yaml entry ("  - name: ..."), indented
// as the exercises' tests are, so that an author can paste it under
// tests: and a learner can replay it with judge test ID --scenario FILE.
// Steps other than apply are written as JSON, which YAML reads as is.
func (t *Test) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n", strconv.Quote(t.Name))
	if t.Seed != 0 {
		fmt.Fprintf(&b, "    seed: %d\n", t.Seed)
	}
	if t.SkipMissing {
		b.WriteString("    skipMissing: true\n")
	}
	if t.PodReady != "" {
		fmt.Fprintf(&b, "    podReady: %s\n", t.PodReady)
	}
	b.WriteString("    objects: |\n" + indentLines(t.Objects, "      "))
	if len(t.Steps) > 0 {
		b.WriteString("    steps:\n")
		for _, st := range t.Steps {
			if st.Apply != "" {
				b.WriteString("      - apply: |\n" + indentLines(st.Apply, "          "))
				continue
			}
			st.objects = nil
			j, _ := jsonMarshal(st)
			b.WriteString("      - " + j + "\n")
		}
	}
	if len(t.Faults) > 0 {
		b.WriteString("    faults: [" + joinNames(t.Faults, ", ") + "]\n")
	}
	return b.String()
}

func indentLines(s, in string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(in + l + "\n")
	}
	return b.String()
}

// ParseScenario parses one test in tests.yaml syntax (a "- name:" entry
// or a bare mapping), as YAML prints it, for `judge test --scenario`.
func ParseScenario(name string, b []byte) (*Test, error) {
	var list []*Test
	if err := yaml.UnmarshalStrict(b, &list); err != nil || len(list) != 1 {
		var t Test
		if err2 := yaml.UnmarshalStrict(b, &t); err2 != nil {
			if err == nil {
				err = fmt.Errorf("a scenario file holds one test, not %d", len(list))
			}
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		list = []*Test{&t}
	}
	t := list[0]
	if t.Name == "" {
		return nil, fmt.Errorf("%s: the test needs a name", name)
	}
	if err := t.parse(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return t, nil
}

// jsonMarshal is json.Marshal without HTML escaping, for YAML people read.
func jsonMarshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return strings.TrimSpace(b.String()), err
}

// ---- 173: a registry ConfigMap guarded by finalizers

// registryWorld: the registry and Deployments new, in place, half done or
// stale, some carrying other controllers' finalizers and metadata, some
// being deleted.
func registryWorld(g *gen) {
	entries := map[string]string{}
	n := g.cfg.Deployments.draw(g.rng)
	var docs []string
	for i := 0; i < n && i < len(depNames); i++ {
		d := g.newDep(depNames[i])
		g.deps = append(g.deps, d)
		var fins []string
		// A scenario about foreign metadata starts its first Deployment
		// with another controller's finalizer and not yet this one's.
		if !(g.force == "foreign-metadata" && i == 0) && g.chance(0.5) {
			d.finalizer = true
			fins = append(fins, registryFinalizer)
			switch {
			case g.want("stale", 0.3):
				entries["default/"+d.name] = d.name + ":" + g.otherTag(d.tag)
			case g.want("stale", 0.2): // the finalizer, not yet the entry
			default:
				entries["default/"+d.name] = d.name + ":" + d.tag
			}
		}
		meta := ""
		if g.want("foreign-metadata", 0.4) {
			fins = append(fins, "backup.example.com/snapshot")
			meta += "\n  labels: {team: shop}\n  annotations: {example.com/note: keep-me}"
		}
		if g.want("terminating-deployment", 0.25) {
			fins = append(fins, holdFinalizer)
			meta += "\n  deletionTimestamp: \"2026-01-01T00:00:00Z\""
			d.gone = true
			g.held = append(g.held, "Deployment/"+d.name)
		}
		if len(fins) > 0 {
			meta = "\n  finalizers: [" + strings.Join(fins, ", ") + "]" + meta
		}
		docs = append(docs, deploymentDoc(d, meta, ""))
	}
	var data []string
	for _, k := range sortedKeys(entries) {
		data = append(data, strconv.Quote(k)+": "+strconv.Quote(entries[k]))
	}
	g.add("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: %s\ndata: {%s}", registryName, strings.Join(data, ", "))
	for _, d := range docs {
		g.add("%s", d)
	}
}

// registryStep draws one workload step of 173.
func registryStep(g *gen, kind string) bool {
	if kind == "meanwhile" && g.chance(0.3) {
		// Someone labels the registry just before the controller writes it.
		g.t.Steps = append(g.t.Steps, Step{Meanwhile: map[string]map[string]any{"ConfigMap/" + registryName: {
			"metadata": map[string]any{"labels": map[string]any{"audited": g.pick([]string{"yes", "no"})}}}}})
		return true
	}
	return podStep(g, kind)
}

// ---- 174: a hash of a ConfigMap on the Pod template

// configWorld: ConfigMaps and the Deployments naming them (or a missing
// one, or none), their template hashes right, wrong or absent, with other
// controllers' annotations and labels beside them.
func configWorld(g *gen) {
	n := g.cfg.Deployments.draw(g.rng)
	for i := 0; i < n && i < len(depNames); i++ {
		name := depNames[i] + "-config"
		if g.chance(0.8) {
			g.addConfigMap(name)
		}
	}
	for i := 0; i < n && i < len(depNames); i++ {
		d := g.newDep(depNames[i])
		g.deps = append(g.deps, d)
		meta, tmeta := "", ""
		annotations := []string{}
		if g.chance(0.85) {
			d.config = d.name + "-config"
			annotations = append(annotations, `"`+configAnnotation+`": `+d.config)
		}
		if g.want("foreign-metadata", 0.7) {
			annotations = append(annotations, "example.com/note: keep-me")
			meta += "\n  labels: {team: shop}"
			tmeta += "example.com/restarted-at: \"2026-01-01\""
		}
		// A scenario about foreign metadata gives the controller a hash to
		// write beside it.
		stale := g.want("stale", 0.5) || g.force == "foreign-metadata"
		if d.config != "" && g.cms[d.config] && !stale {
			tmeta = joinComma(tmeta, `"`+hashAnnotation+`": `+configHash(g.dataOf(d.config)))
		} else if stale && g.chance(0.5) {
			tmeta = joinComma(tmeta, `"`+hashAnnotation+`": "0000stale"`)
		}
		if len(annotations) > 0 {
			meta += "\n  annotations: {" + strings.Join(annotations, ", ") + "}"
		}
		if i > 0 && g.want("terminating-deployment", 0.25) {
			meta += heldMeta
			d.gone = true
			g.held = append(g.held, "Deployment/"+d.name)
		}
		if tmeta != "" {
			tmeta = "\n      annotations: {" + tmeta + "}"
		}
		g.add("%s", deploymentDoc(d, meta, tmeta))
	}
}

func joinComma(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// addConfigMap adds a ConfigMap with drawn data to the initial objects.
func (g *gen) addConfigMap(name string) {
	g.cms[name] = true
	g.data[name] = []string{"a", strconv.Itoa(g.rng.IntN(3)), "b", strconv.Itoa(g.rng.IntN(3))}
	g.add("%s", configMapDoc(name, g.data[name]))
}

func configMapDoc(name string, kv []string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+": "+strconv.Quote(kv[i+1]))
	}
	return "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: " + name + "\ndata: {" + strings.Join(parts, ", ") + "}"
}

// dataOf is a drawn ConfigMap's data as a map.
func (g *gen) dataOf(name string) map[string]string {
	m := map[string]string{}
	kv := g.data[name]
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// configStep draws one workload step of 174.
func configStep(g *gen, kind string) bool {
	var names []string
	for _, d := range g.deps {
		if d.config != "" {
			names = append(names, d.config)
		}
	}
	names = append(names, "spare-config")
	slices.Sort(names)
	names = slices.Compact(names)
	cm := g.pick(names)
	switch kind {
	case "config-edit":
		if !g.cms[cm] {
			return false
		}
		key := g.pick([]string{"a", "b", "c"})
		g.stepPatch("ConfigMap/"+cm, map[string]any{"data": map[string]any{key: strconv.Itoa(3 + g.rng.IntN(3))}})
	case "config-delete":
		if !g.cms[cm] {
			return false
		}
		g.cms[cm] = false
		g.t.Steps = append(g.t.Steps, Step{Delete: "ConfigMap/" + cm})
	case "config-create":
		if g.cms[cm] {
			return false
		}
		g.cms[cm] = true
		g.data[cm] = []string{"a", strconv.Itoa(g.rng.IntN(3))}
		g.t.Steps = append(g.t.Steps, Step{Apply: configMapDoc(cm, g.data[cm]) + "\n"})
	case "repoint":
		live := g.live()
		if len(live) == 0 {
			return false
		}
		d := live[g.rng.IntN(len(live))]
		d.config = cm
		g.stepPatch("Deployment/"+d.name, map[string]any{"metadata": map[string]any{"annotations": map[string]any{configAnnotation: cm}}})
	case "create":
		if len(g.deps) >= len(depNames) {
			return false
		}
		nd := g.newDep(depNames[len(g.deps)])
		nd.config = cm
		g.deps = append(g.deps, nd)
		g.t.Steps = append(g.t.Steps, Step{Apply: deploymentDoc(nd, "\n  annotations: {\""+configAnnotation+"\": "+cm+"}", "") + "\n"})
	default:
		return podStep(g, kind)
	}
	return true
}

func init() {
	genFamilies["registry"] = &genFamily{
		steps:   []string{"image", "metadata", "meanwhile", "delete", "create", "release"},
		objects: []string{"terminating-deployment", "foreign-metadata", "stale"},
		world:   registryWorld, step: registryStep}
	genFamilies["confighash"] = &genFamily{
		steps:   []string{"image", "metadata", "meanwhile", "delete", "create", "release", "config-edit", "config-delete", "config-create", "repoint"},
		objects: []string{"terminating-deployment", "foreign-metadata", "stale"},
		world:   configWorld, step: configStep}
}

// GeneratedTests says how many generated scenarios a submit of the
// exercise runs ("generated 1" .. "generated K"), 0 for none.
func (e *Exercise) GeneratedTests() int {
	if e.Suite.Generate == nil {
		return 0
	}
	return e.Suite.Generate.Scenarios
}

// IsGeneratedTest says whether name is one of the exercise's generated
// scenarios.
func (e *Exercise) IsGeneratedTest(name string) bool {
	n, ok := strings.CutPrefix(name, generatedPrefix)
	i, err := strconv.Atoi(n)
	return ok && err == nil && i >= 1 && i <= e.GeneratedTests() && name == generatedPrefix+strconv.Itoa(i)
}
