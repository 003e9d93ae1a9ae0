package registry

import (
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"strconv"
	"strings"
)

// registryWorld: the registry and Deployments new, in place, half done or
// stale, some carrying other controllers' finalizers and metadata, some
// being deleted.
func registryWorld(g *family.Gen) {
	g.Finalizers = true
	entries := map[string]string{}
	n := g.Deployments()
	var docs []string
	for i := 0; i < n; i++ {
		d := g.NewDep()
		if d == nil {
			break
		}
		g.Deps = append(g.Deps, d)
		if g.Chance(0.15) {
			// Its template leaves the image empty, as a Deployment may: its
			// entry's value is "", which is not the same as no entry.
			d.Tag = ""
			g.Hit("image=empty")
		}
		var fins []string
		// A scenario about foreign metadata starts its first Deployment
		// with another controller's finalizer and not yet this one's.
		if !(g.Forced("foreign-metadata") && i == 0) && g.Chance(0.5) {
			d.Finalizer = true
			fins = append(fins, RegistryFinalizer)
			switch {
			case g.Want("stale", 0.3):
				entries[d.Key()] = d.Name + ":" + g.OtherTag(d.Tag)
			case g.Want("stale", 0.2): // the finalizer, not yet the entry
			default:
				entries[d.Key()] = d.Image()
			}
		}
		meta := ""
		if g.Want("foreign-metadata", 0.4) {
			fins = append(fins, "backup.example.com/snapshot")
			meta += "\n  labels: {team: shop}\n  annotations: {example.com/note: keep-me}"
		}
		if g.Want("terminating-deployment", 0.25) {
			fins = append(fins, family.HoldFinalizer)
			meta += "\n  deletionTimestamp: \"2026-01-01T00:00:00Z\""
			d.Gone = true
			g.Held = append(g.Held, d.Ref())
		}
		if len(fins) > 0 {
			meta = "\n  finalizers: [" + strings.Join(fins, ", ") + "]" + meta
		}
		docs = append(docs, family.DeploymentDoc(d, meta, ""))
	}
	var data []string
	for _, k := range text.SortedKeys(entries) {
		data = append(data, strconv.Quote(k)+": "+strconv.Quote(entries[k]))
	}
	g.Add("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: %s\ndata: {%s}", RegistryName, strings.Join(data, ", "))
	for _, d := range docs {
		g.Add("%s", d)
	}
}

// registryStep draws one workload step of 173.
func registryStep(g *family.Gen, kind string) bool {
	if kind == "meanwhile" && g.Chance(0.3) {
		// Someone labels the registry just before the controller writes it.
		g.Test.Steps = append(g.Test.Steps, exercise.Step{Meanwhile: map[string]map[string]any{"ConfigMap/" + RegistryName: {
			"metadata": map[string]any{"labels": map[string]any{"audited": g.Pick([]string{"yes", "no"})}}}}})
		return true
	}
	return family.PodStep(g, kind)
}

func (Family) GenKinds() (steps, objects []string) {
	return []string{"image", "metadata", "meanwhile", "delete", "create", "recreate", "release"}, []string{"terminating-deployment", "foreign-metadata", "stale"}
}
func (Family) GenWorld(g *family.Gen)                  { registryWorld(g) }
func (Family) GenStep(g *family.Gen, kind string) bool { return registryStep(g, kind) }

// Space: a Deployment whose template names no image.
func (Family) Space(gb *exercise.Generate) []string { return []string{"image=empty"} }
