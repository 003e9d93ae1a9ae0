package judge

import (
	"cmp"
	"context"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// maxShrinkTrials bounds the runs one shrink makes, and maxShrinkSteps
// their work, so a failing submission costs at most that much more: a
// test that failed by running out of steps would otherwise be run out of
// them forty times more. The reference solutions' costliest test takes
// 351,449 steps (sim.go), so eight such trials fit.
const (
	maxShrinkTrials = 40
	maxShrinkSteps  = 3_000_000
)

// shrink makes a failing test smaller while it still fails with the same
// oracle, as delta debugging does, trying each candidate once in a fixed
// order: for a generated scenario its steps, its objects and its replica
// counts, then (for any test) its planned faults. It stops after
// maxShrinkTrials runs. It returns nil when a written test loses no
// fault; a generated scenario always comes back with its YAML.
//
// It says, too, how many steps of the learner's the trials took: they
// stop once they have taken maxShrinkSteps.
func shrink(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, r *verdict.TestResult) (_ *verdict.Shrunk, steps int64) {
	if r.Oracle == verdict.OracleNotJudged || len(t.Faults) == 0 && !t.Generated {
		return nil, 0
	}
	best := *t
	// The trials keep the test's choices whatever their name.
	best.Seed, best.Runtime = t.SeedFor(seed), cmp.Or(t.Runtime, RuntimeKey(seed))
	trials := 0
	try := func(c exercise.Test) bool {
		if trials >= maxShrinkTrials || steps >= maxShrinkSteps || ctx.Err() != nil || r.Oracle == verdict.OracleNotJudged {
			return false
		}
		// parse writes each step's objects: into steps of the trial's
		// own, not the suite's, which other judgements read meanwhile.
		c.Steps = slices.Clone(c.Steps)
		if c.Parse() != nil {
			return false
		}
		trials++
		rr := runTest(ctx, newCtl, ex, &c, seed, fileName)
		steps += rr.Steps
		if rr.Oracle == verdict.OracleNotJudged {
			// A trial the clock stopped says nothing; the verdict would
			// depend on the load, so the submission is not judged.
			r.Oracle = verdict.OracleNotJudged
			return false
		}
		if rr.Status != verdict.StatusPass && rr.Oracle == r.Oracle && referencePasses(ctx, &c, seed) {
			best = c
			return true
		}
		return false
	}
	if t.Generated {
		for i := len(best.Steps) - 1; i >= 0; i-- {
			c := best
			c.Steps = slices.Delete(slices.Clone(best.Steps), i, i+1)
			try(c)
		}
		for i := len(exercise.SplitYAMLDocs(best.Objects)) - 1; i >= 0; i-- {
			docs := exercise.SplitYAMLDocs(best.Objects)
			c := best
			c.Objects = strings.Join(slices.Delete(docs, i, i+1), "\n---\n") + "\n"
			try(c)
		}
		for _, c := range fewerReplicas(best) {
			try(c)
		}
	}
	for _, f := range t.Faults {
		c := best
		c.Faults = slices.DeleteFunc(slices.Clone(best.Faults), func(x verdict.Fault) bool { return x == f })
		try(c)
	}
	if r.Oracle == verdict.OracleNotJudged || ctx.Err() != nil {
		return nil, steps
	}
	if !t.Generated {
		if len(best.Faults) == len(t.Faults) {
			return nil, steps
		}
		list := "none"
		if len(best.Faults) > 0 {
			list = text.JoinNames(best.Faults, ",")
		}
		return &verdict.Shrunk{Faults: best.Faults, Replay: exercise.ReplayCommand(ex, t.Name, seed) + " --faults " + list}, steps
	}
	best.Name = t.Name + ", seed " + strconv.FormatUint(seed, 10) + ", shrunk"
	r.Scenario = best.YAML()
	return &verdict.Shrunk{Faults: best.Faults, Replay: exercise.ScenarioCommand(ex)}, steps
}

var replicasRE = regexp.MustCompile(`replicas: (\d+)`)

// fewerReplicas proposes, for each replica count in the test's objects,
// apply steps and scale patches above 1, the same test with that count
// halved (rounding down), first to last.
func fewerReplicas(t exercise.Test) []exercise.Test {
	var out []exercise.Test
	half := func(n int) int { return n / 2 }
	for _, m := range replicasRE.FindAllStringSubmatchIndex(t.Objects, -1) {
		n, _ := strconv.Atoi(t.Objects[m[2]:m[3]])
		if n > 1 {
			c := t
			c.Objects = t.Objects[:m[2]] + strconv.Itoa(half(n)) + t.Objects[m[3]:]
			out = append(out, c)
		}
	}
	for i, st := range t.Steps {
		for ref, p := range st.Patch {
			spec, _ := p["spec"].(map[string]any)
			n, ok := asInt(spec["replicas"])
			if !ok || n <= 1 {
				continue
			}
			c := t
			c.Steps = slices.Clone(t.Steps)
			c.Steps[i].Patch = map[string]map[string]any{ref: {"spec": map[string]any{"replicas": half(n)}}}
			out = append(out, c)
		}
		if m := replicasRE.FindStringSubmatchIndex(st.Apply); m != nil {
			if n, _ := strconv.Atoi(st.Apply[m[2]:m[3]]); n > 1 {
				c := t
				c.Steps = slices.Clone(t.Steps)
				c.Steps[i].Apply = st.Apply[:m[2]] + strconv.Itoa(half(n)) + st.Apply[m[3]:]
				out = append(out, c)
			}
		}
	}
	return out
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		return int(x), x == float64(int(x))
	}
	return 0, false
}

// referencePasses says whether the exercise's solution passes a shrink
// candidate: one it fails is a world the statement does not allow (a
// registry removed with the object that held it, say), and a learner's
// failure there proves nothing. Without a reference to ask, it passes.
func referencePasses(ctx context.Context, t *exercise.Test, seed uint64) bool {
	dc, _ := ctx.Value(diffKey{}).(diffContext)
	if dc.ref == nil || dc.ref.self {
		return true
	}
	obs, err := dc.ref.Observe(ctx, t, seed)
	return err == nil && obs.passed
}
