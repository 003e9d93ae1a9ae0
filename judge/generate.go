package judge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/verdict"
)

// Generated scenarios: besides its named tests, an exercise's submit runs
// K scenarios drawn from the seed (stateful property-based testing). Each
// is an ordinary Test (objects, steps, faults), built as tests.yaml text
// would be, so that the model judges it as it judges the named tests and
// a failing one prints as a test an author can paste. The exercise's
// generate: block sets the ranges; the model's family decides what its
// world holds (its generator).

// checkGenerate validates a generate: block against its model's family.
func checkGenerate(gb *exercise.Generate, model string) error {
	f, ok := models[model].(family.Generator)
	if !ok {
		return fmt.Errorf("generate: model %q has no generator", model)
	}
	if gb.Scenarios < 1 || gb.Scenarios > 20 {
		return fmt.Errorf("generate: scenarios must be 1 to 20")
	}
	steps, objects := f.GenKinds()
	for _, k := range gb.StepKinds {
		if !slices.Contains(steps, k) {
			return fmt.Errorf("generate: step kind %q is none of the %s model's: %s", k, model, family.Described(steps, family.GenStepKinds))
		}
	}
	for _, k := range gb.ObjectKinds {
		if !slices.Contains(objects, k) {
			return fmt.Errorf("generate: object kind %q is none of the %s model's: %s", k, model, family.Described(objects, family.GenObjectKinds))
		}
	}
	for _, fl := range gb.Faults {
		if !slices.Contains(verdict.Faults, fl) {
			return fmt.Errorf("generate: unknown fault %q", fl)
		}
	}
	for _, m := range gb.PodReady {
		if !slices.Contains(cluster.PodReadyModes, m) {
			return fmt.Errorf("generate: podReady: %q is none of %s", m, strings.Join(cluster.PodReadyModes, ", "))
		}
	}
	if len(gb.Images) == 0 {
		gb.Images = []string{"v1", "v2"}
	}
	if gb.Deployments == (exercise.Range{}) {
		gb.Deployments = exercise.Range{1, 2}
	}
	return nil
}

// generateTest draws scenario i, named name ("generated i"), of an
// exercise from the submission's seed.
func generateTest(s *exercise.Suite, i int, name string, seed uint64) *exercise.Test {
	t, _ := drawScenario(s, i, name, seed)
	return t
}

// drawScenario is generateTest, with the points of the input space the
// scenario reached.
func drawScenario(s *exercise.Suite, i int, name string, seed uint64) (*exercise.Test, map[string]bool) {
	x := exercise.TestSeed(seed, "generate/"+name)
	g := &family.Gen{Rng: rand.New(rand.NewPCG(x, x^0x6a09e667f3bcc909)), Ranges: s.Generate, Index: i, Turn: int(exercise.TestSeed(seed, "edges") % 4),
		Test: &exercise.Test{Name: name, SkipMissing: true, Generated: true}, ConfigMaps: map[string]bool{}, ConfigData: map[string][]string{}}
	f := models[s.Model].(family.Generator)
	g.Force = rotation(g.Ranges.ObjectKinds, i, s.Generate.Scenarios)
	if len(g.Ranges.PodReady) > 0 {
		if m := g.PickOf("podReady", g.Ranges.PodReady); m != cluster.ReadySoon {
			g.Test.PodReady = m
		}
	}
	f.GenWorld(g)
	g.Test.Objects = strings.Join(g.Docs, "\n---\n") + "\n"
	// The scenario's own kinds of step come first; the rest are drawn.
	n := g.Draw("steps", g.Ranges.Steps)
	for _, kind := range rotation(g.Ranges.StepKinds, i, s.Generate.Scenarios) {
		if len(g.Test.Steps) < n {
			f.GenStep(g, kind)
		}
	}
	for tries := 0; len(g.Test.Steps) < n && tries < 4*n && len(g.Ranges.StepKinds) > 0; tries++ {
		f.GenStep(g, g.Pick(g.Ranges.StepKinds))
	}
	// How many fault classes, boundaries first, and which: any of the
	// block's, each as likely as another, listed in verdict.Faults order.
	var faults []verdict.Fault
	if k := min(g.Ranges.MaxFaults, len(g.Ranges.Faults)); k > 0 {
		n := g.Draw("faults", exercise.Range{0, k})
		for _, j := range g.Rng.Perm(len(g.Ranges.Faults))[:n] {
			faults = append(faults, g.Ranges.Faults[j])
		}
		slices.SortFunc(faults, func(a, b verdict.Fault) int {
			return slices.Index(verdict.Faults, a) - slices.Index(verdict.Faults, b)
		})
	}
	g.Test.Faults = faults
	for _, fl := range faults {
		g.Hit("fault=" + string(fl))
	}
	if err := g.Test.Parse(); err != nil {
		// A generator's own bug: say so plainly rather than judge with it.
		panic("generated scenario " + name + " does not parse: " + err.Error() + "\n" + g.Test.YAML())
	}
	return g.Test, g.Reached
}

// rotation gives scenario i of K its own kinds (of object or of step):
// the i-th of the list, wrapping round, and the (i+K)-th where there is
// one, so that every seed's K scenarios make the first 2K kinds.
func rotation(kinds []string, i, K int) []string {
	if len(kinds) == 0 {
		return nil
	}
	out := []string{kinds[(i-1)%len(kinds)]}
	if i-1+K < len(kinds) {
		out = append(out, kinds[i-1+K])
	}
	return out
}

// generatedTests are a submission's K scenarios, or the one named only.
func generatedTests(s *exercise.Suite, seed uint64, only string) []*exercise.Test {
	if s.Generate == nil {
		return nil
	}
	var out []*exercise.Test
	for i := 1; i <= s.Generate.Scenarios; i++ {
		name := exercise.GeneratedPrefix + strconv.Itoa(i)
		if only == "" || only == name {
			out = append(out, generateTest(s, i, name, seed))
		}
	}
	return out
}
