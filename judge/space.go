package judge

import (
	"fmt"
	"slices"
	"strconv"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
)

// The input space of an exercise is what its statement allows the world
// to be, as its generate: block declares it: every range with both ends
// (and a value between where there is one), every image, namespace, kind
// of step, kind of object and fault class, and the identities a world of
// several objects may have (the same name in two namespaces, a name that
// begins another's, an object with several owners), plus what its
// family's generator adds (family.Spacer). Coverage is how many of those
// points the generated scenarios reach at the seeds a learner is judged
// at; `judge check` fails an exercise below all of them.

// CoverageSeeds are the seeds the coverage report draws scenarios at.
var CoverageSeeds = [2]uint64{1, 20}

// Coverage is how much of an exercise's input space its generated
// scenarios reach.
type Coverage struct {
	Points  []string // every point declared
	Missing []string // those no scenario reached
}

// String says it in a line: "52 of 52 points (100 %)".
func (c Coverage) String() string {
	n := len(c.Points)
	got := n - len(c.Missing)
	return fmt.Sprintf("%d of %d points of the input space reached by the generated scenarios at seeds %d–%d (%d %%)",
		got, n, CoverageSeeds[0], CoverageSeeds[1], 100*got/max(n, 1))
}

// inputSpace lists the points of an exercise's input space.
func inputSpace(gb *exercise.Generate, model string) []string {
	var out []string
	ranges := []struct {
		dim string
		r   exercise.Range
	}{{"deployments", gb.Deployments}, {"replicas", gb.Replicas}, {"maxSurge", gb.MaxSurge},
		{"maxUnavailable", gb.MaxUnavailable}, {"steps", gb.Steps}}
	if k := min(gb.MaxFaults, len(gb.Faults)); k > 0 {
		ranges = append(ranges, struct {
			dim string
			r   exercise.Range
		}{"faults", exercise.Range{0, k}})
	}
	drawn, some := models[model].(family.Ranger)
	for _, x := range ranges {
		if some && x.dim != "steps" && x.dim != "faults" && !slices.Contains(drawn.Ranges(), x.dim) {
			continue
		}
		lo, hi := x.r[0], max(x.r[0], x.r[1])
		out = append(out, family.RangePoint(x.dim, x.r, lo))
		if hi > lo {
			out = append(out, family.RangePoint(x.dim, x.r, hi))
		}
		if hi-lo >= 2 {
			out = append(out, family.RangePoint(x.dim, x.r, lo+1))
		}
	}
	for _, v := range gb.Images {
		out = append(out, "image="+v)
	}
	nss := gb.Namespaces
	if len(nss) == 0 {
		nss = []string{"default"}
	}
	for _, v := range nss {
		out = append(out, "namespace="+v)
	}
	if len(nss) >= 2 {
		out = append(out, "identity=same-name-other-namespace")
	}
	if max(gb.Deployments[0], gb.Deployments[1]) >= 2 || slices.Contains(gb.StepKinds, "create") {
		out = append(out, "identity=name-prefix")
	}
	for _, k := range gb.StepKinds {
		out = append(out, "step="+k)
	}
	for _, k := range gb.ObjectKinds {
		out = append(out, "object="+k)
	}
	for _, f := range gb.Faults {
		out = append(out, "fault="+string(f))
	}
	for _, m := range gb.PodReady {
		out = append(out, "podReady="+m)
	}
	if sp, ok := models[model].(family.Spacer); ok {
		out = append(out, sp.Space(gb)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SpaceCoverage draws every generated scenario of the exercise at the
// coverage seeds and reports which points of its input space they
// reached. An exercise without a generate: block has no input space.
func SpaceCoverage(ex *exercise.Exercise) (Coverage, bool) {
	s := ex.Suite
	if s.Generate == nil {
		return Coverage{}, false
	}
	c := Coverage{Points: inputSpace(s.Generate, s.Model)}
	reached := map[string]bool{}
	for seed := CoverageSeeds[0]; seed <= CoverageSeeds[1]; seed++ {
		for i := 1; i <= s.Generate.Scenarios; i++ {
			_, r := drawScenario(s, i, exercise.GeneratedPrefix+strconv.Itoa(i), seed)
			for p := range r {
				reached[p] = true
			}
		}
	}
	for _, p := range c.Points {
		if !reached[p] {
			c.Missing = append(c.Missing, p)
		}
	}
	return c, true
}
