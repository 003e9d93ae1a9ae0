package judge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// CheckResult is the author's gate for one exercise.
type CheckResult struct {
	Problems []string // each makes the exercise fail the check
	Passes   []string // what held, for -v
	// Coverage is how much of its input space the generated scenarios
	// reach (space.go); nil for an exercise without a generate: block.
	Coverage *Coverage
}

// Check verifies an exercise as its author must: the reference solution
// passes every test; the starter fails; each mutant fails, first with the
// oracle it names; and every fault a test plans fires at least once for
// the solution, since a planned fault that never fires tests nothing.
// (Front matter and samples are checked when the exercise loads.)
func (e *Engine) Check(ctx context.Context, ex *exercise.Exercise) CheckResult {
	type kase struct {
		what   string
		code   []byte
		expect string // "" must pass, "fail" must fail, else the oracle
	}
	cases := []kase{{"solution", ex.Solution, ""}, {"starter", ex.Starter, "fail"}}
	for _, m := range ex.Mutants {
		cases = append(cases, kase{"mutant " + m.Name, m.Code, m.Expect})
	}
	verdicts := make([]*verdict.Verdict, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			verdicts[i] = e.Judge(ctx, Submission{Exercise: ex, Code: c.code, Mode: verdict.ModeSubmit})
		}()
	}
	wg.Wait()
	var r CheckResult
	if c, ok := SpaceCoverage(ex); ok {
		r.Coverage = &c
		if len(c.Missing) > 0 {
			r.Problems = append(r.Problems, "input space: "+c.String()+"; never reached: "+strings.Join(c.Missing, ", "))
		}
	}
	for i, c := range cases {
		v := verdicts[i]
		first := v.FirstFailure()
		switch {
		case v.Outcome == verdict.OutcomeNotJudged:
			// Says nothing about the exercise; the check cannot pass on it.
			r.Problems = append(r.Problems, c.what+": not judged: the machine was too busy to finish; run the check again")
		case v.Outcome == verdict.OutcomeInternalError || v.Outcome == verdict.OutcomeCompileError:
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %s: %s", c.what, v.Outcome, v.Summary()))
		case c.expect == "" && v.Outcome != verdict.OutcomeAccepted:
			r.Problems = append(r.Problems, fmt.Sprintf("%s fails %q: %s: %s", c.what, first.Name, first.Oracle, first.Message))
		case c.expect == "":
			r.Passes = append(r.Passes, c.what+" passes every test")
		case v.Outcome == verdict.OutcomeAccepted:
			r.Problems = append(r.Problems, c.what+" passes every test but must fail")
		case c.expect != "fail" && string(first.Oracle) != c.expect:
			r.Problems = append(r.Problems, fmt.Sprintf("%s fails first on %q with %s, not %s: %s", c.what, first.Name, first.Oracle, c.expect, first.Message))
		default:
			r.Passes = append(r.Passes, fmt.Sprintf("%s fails %q (%s)", c.what, first.Name, first.Oracle))
		}
	}
	if sol := verdicts[0]; sol.Outcome == verdict.OutcomeAccepted {
		for i, t := range ex.Suite.Tests {
			for _, f := range t.Faults {
				if !slices.Contains(sol.Tests[i].FaultClasses, f) {
					r.Problems = append(r.Problems, fmt.Sprintf("test %q plans fault %s, but it never fired for the solution (seed %d)", t.Name, f, sol.Seed))
				}
			}
		}
	}
	return r
}
