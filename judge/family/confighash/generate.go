package confighash

import (
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"slices"
	"strconv"
	"strings"
)

// configWorld: ConfigMaps and the Deployments naming them (or a missing
// one, or none), their template hashes right, wrong or absent, with other
// controllers' annotations and labels beside them.
func configWorld(g *family.Gen) {
	n := g.Deployments()
	var deps []*family.Dep
	for i := 0; i < n; i++ {
		d := g.NewDep()
		if d == nil {
			break
		}
		g.Deps = append(g.Deps, d)
		deps = append(deps, d)
		// The ConfigMaps come first, so that the Deployments meet them.
		if name := d.Name + "-config"; g.Chance(0.8) && !g.ConfigMaps[d.NS+"/"+name] {
			addConfigMap(g, d.NS, name)
		}
	}
	for i, d := range deps {
		meta, tmeta := "", ""
		annotations := []string{}
		if g.Chance(0.85) {
			d.Config = d.Name + "-config"
			annotations = append(annotations, `"`+ConfigAnnotation+`": `+d.Config)
		}
		if g.Want("foreign-metadata", 0.7) {
			annotations = append(annotations, "example.com/note: keep-me")
			meta += "\n  labels: {team: shop}"
			tmeta += "example.com/restarted-at: \"2026-01-01\""
		}
		// A scenario about foreign metadata gives the controller a hash to
		// write beside it.
		stale := g.Want("stale", 0.5) || g.Forced("foreign-metadata")
		if d.Config != "" && g.ConfigMaps[d.NS+"/"+d.Config] && !stale {
			tmeta = joinComma(tmeta, `"`+HashAnnotation+`": `+ConfigHash(dataOf(g, d.NS+"/"+d.Config)))
		} else if stale && g.Chance(0.5) {
			tmeta = joinComma(tmeta, `"`+HashAnnotation+`": "0000stale"`)
		}
		if len(annotations) > 0 {
			meta += "\n  annotations: {" + strings.Join(annotations, ", ") + "}"
		}
		d.Meta = meta
		if i > 0 && g.Want("terminating-deployment", 0.25) {
			meta += family.HeldMeta
			d.Gone = true
			g.Held = append(g.Held, d.Ref())
		}
		if tmeta != "" {
			tmeta = "\n      annotations: {" + tmeta + "}"
		}
		g.Add("%s", family.DeploymentDoc(d, meta, tmeta))
	}
}

func joinComma(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// addConfigMap adds a ConfigMap with drawn data to the initial objects.
func addConfigMap(g *family.Gen, ns, name string) {
	key := ns + "/" + name
	g.ConfigMaps[key] = true
	g.ConfigData[key] = drawData(g)
	g.Add("%s", configMapDoc(ns, name, g.ConfigData[key]))
}

// Keys and values a ConfigMap's data draws from: keys whose byte order
// differs from any order a learner might guess ("A" < "B" < "a" < "a-b" <
// "a.b" < "b"), and values empty, ordinary, holding the hash's own
// separators, or long.
var (
	dataKeys   = []string{"a", "b", "A", "a-b", "a.b", "c"}
	dataValues = []string{"1", "2", "", "x=y", strings.Repeat("long", 80)}
)

// drawData draws a ConfigMap's data, as key, value, key, value...: none
// at all, or one to four entries.
func drawData(g *family.Gen) []string {
	n := g.Draw("data-entries", exercise.Range{0, 4})
	keys := slices.Clone(dataKeys)
	g.Rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var kv []string
	for _, k := range keys[:n] {
		kv = append(kv, k, pickValue(g))
	}
	if n > 0 && g.Chance(0.2) {
		kv[len(kv)-1] = dataValues[len(dataValues)-1]
		g.Hit("data-value=long")
	}
	return kv
}

// pickValue draws a short value. Its point is quoted (PickOf's is not),
// so that the empty value shows as "".
func pickValue(g *family.Gen) string {
	v := g.Pick(dataValues[:len(dataValues)-1])
	g.Hit("data-value=" + strconv.Quote(v))
	return v
}

func configMapDoc(ns, name string, kv []string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, strconv.Quote(kv[i])+": "+strconv.Quote(kv[i+1]))
	}
	return "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: " + name + family.NamespaceLine(ns) + "\ndata: {" + strings.Join(parts, ", ") + "}"
}

// dataOf is a drawn ConfigMap's data as a map.
func dataOf(g *family.Gen, name string) map[string]string {
	m := map[string]string{}
	kv := g.ConfigData[name]
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// configStep draws one workload step of 174.
func configStep(g *family.Gen, kind string) bool {
	// A ConfigMap the step acts on: one a Deployment names, or a spare,
	// in the namespace of a Deployment.
	var keys []string
	for _, d := range g.Deps {
		if d.Config != "" {
			keys = append(keys, d.NS+"/"+d.Config)
		}
		keys = append(keys, d.NS+"/spare-config")
	}
	if len(keys) == 0 {
		keys = append(keys, "default/spare-config")
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	key := g.Pick(keys)
	ns, cm, _ := strings.Cut(key, "/")
	ref := family.Ref("ConfigMap", ns, cm)
	switch kind {
	case "config-edit":
		if !g.ConfigMaps[key] {
			return false
		}
		k := g.Pick(dataKeys)
		v := pickValue(g)
		if g.Chance(0.3) {
			// The entry goes: a merge patch removes a key set to null.
			g.StepPatch(ref, map[string]any{"data": map[string]any{k: nil}})
			g.Hit("step=config-edit-remove-key")
		} else {
			g.StepPatch(ref, map[string]any{"data": map[string]any{k: v}})
		}
	case "config-delete":
		if !g.ConfigMaps[key] {
			return false
		}
		g.ConfigMaps[key] = false
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: ref})
	case "config-create":
		if g.ConfigMaps[key] {
			return false
		}
		g.ConfigMaps[key] = true
		g.ConfigData[key] = drawData(g)
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: configMapDoc(ns, cm, g.ConfigData[key]) + "\n"})
	case "repoint":
		var live []*family.Dep
		for _, d := range g.Live() {
			if d.NS == ns {
				live = append(live, d)
			}
		}
		if len(live) == 0 {
			return false
		}
		d := live[g.Rng.IntN(len(live))]
		d.Config = cm
		d.Meta = "\n  annotations: {\"" + ConfigAnnotation + "\": " + cm + "}"
		g.StepPatch(d.Ref(), map[string]any{"metadata": map[string]any{"annotations": map[string]any{ConfigAnnotation: cm}}})
	case "tamper":
		// Someone edits the hash by hand: to a wrong value, or away.
		var named []*family.Dep
		for _, d := range g.Live() {
			if d.Config != "" {
				named = append(named, d)
			}
		}
		if len(named) == 0 {
			return false
		}
		d := named[g.Rng.IntN(len(named))]
		var v any = "0000tampered"
		if g.Chance(0.5) {
			v = nil
		}
		g.StepPatch(d.Ref(), map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]any{HashAnnotation: v}}}}})
	case "create":
		nd := g.NewDep()
		if nd == nil {
			return false
		}
		nd.Config = nd.Name + "-config"
		if g.Chance(0.5) {
			if k := g.Pick(keys); strings.HasPrefix(k, nd.NS+"/") {
				_, nd.Config, _ = strings.Cut(k, "/")
			}
		}
		g.Deps = append(g.Deps, nd)
		nd.Meta = "\n  annotations: {\"" + ConfigAnnotation + "\": " + nd.Config + "}"
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: family.DeploymentDoc(nd, nd.Meta, "") + "\n"})
	default:
		return family.PodStep(g, kind)
	}
	g.Hit("step=" + kind)
	return true
}

func (Family) GenKinds() (steps, objects []string) {
	return []string{"image", "metadata", "meanwhile", "delete", "create", "recreate", "release", "config-edit", "config-delete", "config-create", "repoint", "tamper"},
		[]string{"terminating-deployment", "foreign-metadata", "stale"}
}
func (Family) GenWorld(g *family.Gen)                  { configWorld(g) }
func (Family) GenStep(g *family.Gen, kind string) bool { return configStep(g, kind) }

// Space: a ConfigMap with no data and with the most entries, every kind
// of value, and an edit that removes a key.
func (Family) Space(gb *exercise.Generate) []string {
	out := []string{"data-entries=0", "data-entries=4", "data-entries=1..3", "data-value=long"}
	for _, v := range dataValues[:len(dataValues)-1] {
		out = append(out, "data-value="+strconv.Quote(v))
	}
	if slices.Contains(gb.StepKinds, "config-edit") {
		out = append(out, "step=config-edit-remove-key")
	}
	return out
}
