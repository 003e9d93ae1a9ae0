package progress

import (
	"slices"
	"strconv"
	"strings"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
)

// The generator's world is 172's, Deployments and the test's Pods, each
// Deployment with a progress deadline drawn from Deadlines (0: none),
// and one more kind of step: a new deadline. Pods a step creates run the
// Deployment's image, which the world's missingImages may leave Pending
// for ever.

// Deadlines are the progressDeadlineSeconds a generated Deployment may
// have: none, shorter than the step gap, and longer.
var Deadlines = []string{"0", "30", "120", "600"}

func (Family) GenKinds() (steps, objects []string) {
	return append(slices.Clone(family.PodSteps), "unready", "ready", "create-pod", "deadline"),
		append(slices.Clone(family.PodObjects), "unready-pod", "pending-pod")
}

func (Family) GenWorld(g *family.Gen) {
	family.PodWorld(g, true)
	for i, doc := range g.Docs {
		if strings.HasPrefix(doc, "kind: Deployment") {
			g.Docs[i] = withDeadline(g, doc)
		}
	}
}

func (Family) GenStep(g *family.Gen, kind string) bool {
	if kind == "deadline" {
		live := g.Live()
		if len(live) == 0 {
			return false
		}
		d := live[g.Rng.IntN(len(live))]
		n, _ := strconv.Atoi(g.PickOf("deadline", Deadlines))
		g.StepPatch(d.Ref(), map[string]any{"spec": map[string]any{"progressDeadlineSeconds": n}})
		g.Hit("step=deadline")
		return true
	}
	n := len(g.Test.Steps)
	if !family.PodStep(g, kind) {
		return false
	}
	for i := n; i < len(g.Test.Steps); i++ {
		if st := &g.Test.Steps[i]; strings.HasPrefix(st.Apply, "kind: Deployment") {
			st.Apply = withDeadline(g, st.Apply)
		}
	}
	return true
}

// withDeadline gives a Deployment manifest a deadline drawn from
// Deadlines, or none.
func withDeadline(g *family.Gen, doc string) string {
	n := g.PickOf("deadline", Deadlines)
	if n == "0" {
		return doc
	}
	return strings.Replace(doc, "\nspec:\n  replicas:", "\nspec:\n  progressDeadlineSeconds: "+n+"\n  replicas:", 1)
}

// Space adds the deadlines to the Deployment-and-Pod world's points.
func (Family) Space(gb *exercise.Generate) []string {
	out := family.PodSpace(gb)
	for _, n := range Deadlines {
		out = append(out, "deadline="+n)
	}
	return out
}
