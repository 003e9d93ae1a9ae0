package judge

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// CheckResult is the author's gate for one exercise.
type CheckResult struct {
	Problems []string // each makes the exercise fail the check
	Passes   []string // what held, for -v
}

// Check verifies an exercise as its author must: the reference solution
// passes every test; the starter fails; each mutant fails, first with the
// oracle it names; and every fault a test plans fires at least once for
// the solution, since a planned fault that never fires tests nothing.
// (Front matter and samples are checked when the exercise loads.)
func (e *Engine) Check(ctx context.Context, ex *Exercise) CheckResult {
	type kase struct {
		what   string
		code   []byte
		expect string // "" must pass, "fail" must fail, else the oracle
	}
	cases := []kase{{"solution", ex.Solution, ""}, {"starter", ex.Starter, "fail"}}
	for _, m := range ex.Mutants {
		cases = append(cases, kase{"mutant " + m.Name, m.Code, m.Expect})
	}
	verdicts := make([]*Verdict, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			verdicts[i] = e.Judge(ctx, Submission{Exercise: ex, Code: c.code, Mode: ModeSubmit})
		}()
	}
	wg.Wait()
	var r CheckResult
	for i, c := range cases {
		v := verdicts[i]
		first := v.FirstFailure()
		switch {
		case v.Outcome == OutcomeInternalError || v.Outcome == OutcomeCompileError:
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %s: %s", c.what, v.Outcome, v.Summary()))
		case c.expect == "" && v.Outcome != OutcomeAccepted:
			r.Problems = append(r.Problems, fmt.Sprintf("%s fails %q: %s: %s", c.what, first.Name, first.Oracle, first.Message))
		case c.expect == "":
			r.Passes = append(r.Passes, c.what+" passes every test")
		case v.Outcome == OutcomeAccepted:
			r.Problems = append(r.Problems, c.what+" passes every test but must fail")
		case c.expect != "fail" && first.Oracle != c.expect:
			r.Problems = append(r.Problems, fmt.Sprintf("%s fails first on %q with %s, not %s: %s", c.what, first.Name, first.Oracle, c.expect, first.Message))
		default:
			r.Passes = append(r.Passes, fmt.Sprintf("%s fails %q (%s)", c.what, first.Name, first.Oracle))
		}
	}
	if sol := verdicts[0]; sol.Outcome == OutcomeAccepted {
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

// FirstFailure returns the first test that did not pass, or a zero value.
func (v *Verdict) FirstFailure() TestResult {
	for _, t := range v.Tests {
		if t.Status != StatusPass {
			return t
		}
	}
	return TestResult{}
}

// Summary is the verdict's message and diagnostics on one line.
func (v *Verdict) Summary() string {
	s := v.Message
	for _, d := range v.Diagnostics {
		s += fmt.Sprintf(" %s:%d: %s;", d.File, d.Line, d.Message)
	}
	return s
}
