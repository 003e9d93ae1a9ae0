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
	n := g.Ranges.Deployments.Draw(g.Rng)
	for i := 0; i < n && i < len(family.DepNames); i++ {
		name := family.DepNames[i] + "-config"
		if g.Chance(0.8) {
			addConfigMap(g, name)
		}
	}
	for i := 0; i < n && i < len(family.DepNames); i++ {
		d := g.NewDep(family.DepNames[i])
		g.Deps = append(g.Deps, d)
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
		stale := g.Want("stale", 0.5) || g.Force == "foreign-metadata"
		if d.Config != "" && g.ConfigMaps[d.Config] && !stale {
			tmeta = joinComma(tmeta, `"`+HashAnnotation+`": `+ConfigHash(dataOf(g, d.Config)))
		} else if stale && g.Chance(0.5) {
			tmeta = joinComma(tmeta, `"`+HashAnnotation+`": "0000stale"`)
		}
		if len(annotations) > 0 {
			meta += "\n  annotations: {" + strings.Join(annotations, ", ") + "}"
		}
		if i > 0 && g.Want("terminating-deployment", 0.25) {
			meta += family.HeldMeta
			d.Gone = true
			g.Held = append(g.Held, "Deployment/"+d.Name)
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
func addConfigMap(g *family.Gen, name string) {
	g.ConfigMaps[name] = true
	g.ConfigData[name] = []string{"a", strconv.Itoa(g.Rng.IntN(3)), "b", strconv.Itoa(g.Rng.IntN(3))}
	g.Add("%s", configMapDoc(name, g.ConfigData[name]))
}

func configMapDoc(name string, kv []string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+": "+strconv.Quote(kv[i+1]))
	}
	return "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: " + name + "\ndata: {" + strings.Join(parts, ", ") + "}"
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
	var names []string
	for _, d := range g.Deps {
		if d.Config != "" {
			names = append(names, d.Config)
		}
	}
	names = append(names, "spare-config")
	slices.Sort(names)
	names = slices.Compact(names)
	cm := g.Pick(names)
	switch kind {
	case "config-edit":
		if !g.ConfigMaps[cm] {
			return false
		}
		key := g.Pick([]string{"a", "b", "c"})
		g.StepPatch("ConfigMap/"+cm, map[string]any{"data": map[string]any{key: strconv.Itoa(3 + g.Rng.IntN(3))}})
	case "config-delete":
		if !g.ConfigMaps[cm] {
			return false
		}
		g.ConfigMaps[cm] = false
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Delete: "ConfigMap/" + cm})
	case "config-create":
		if g.ConfigMaps[cm] {
			return false
		}
		g.ConfigMaps[cm] = true
		g.ConfigData[cm] = []string{"a", strconv.Itoa(g.Rng.IntN(3))}
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: configMapDoc(cm, g.ConfigData[cm]) + "\n"})
	case "repoint":
		live := g.Live()
		if len(live) == 0 {
			return false
		}
		d := live[g.Rng.IntN(len(live))]
		d.Config = cm
		g.StepPatch("Deployment/"+d.Name, map[string]any{"metadata": map[string]any{"annotations": map[string]any{ConfigAnnotation: cm}}})
	case "create":
		if len(g.Deps) >= len(family.DepNames) {
			return false
		}
		nd := g.NewDep(family.DepNames[len(g.Deps)])
		nd.Config = cm
		g.Deps = append(g.Deps, nd)
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Apply: family.DeploymentDoc(nd, "\n  annotations: {\""+ConfigAnnotation+"\": "+cm+"}", "") + "\n"})
	default:
		return family.PodStep(g, kind)
	}
	return true
}

func (Family) GenKinds() (steps, objects []string) {
	return []string{"image", "metadata", "meanwhile", "delete", "create", "release", "config-edit", "config-delete", "config-create", "repoint"},
		[]string{"terminating-deployment", "foreign-metadata", "stale"}
}
func (Family) GenWorld(g *family.Gen)                  { configWorld(g) }
func (Family) GenStep(g *family.Gen, kind string) bool { return configStep(g, kind) }
