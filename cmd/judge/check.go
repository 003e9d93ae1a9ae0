package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"ctrljudge/judge"
)

// cmdCheck is the author's gate for exercises: the solution must pass
// every test, the starter must fail, each mutant must fail with the oracle
// it names, and every fault a test asks for must fire at least once for
// the solution (a planned fault that never fires tests nothing).
func cmdCheck(args []string) int {
	fs, dir := newFlags("check")
	verbose := fs.Bool("v", false, "show passing checks too")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	cat, err := loadCatalog(*dir)
	if err != nil {
		return fail("%v", err)
	}
	exs := cat.Exercises
	if len(pos) > 0 {
		exs = nil
		for _, id := range pos {
			ex, err := cat.Find(id)
			if err != nil {
				return fail("%v", err)
			}
			exs = append(exs, ex)
		}
	}
	eng, err := newEngine()
	if err != nil {
		return fail("%v", err)
	}
	defer eng.Close()
	bad := 0
	for _, ex := range exs {
		problems, passes := checkExercise(eng, ex)
		if len(problems) == 0 {
			fmt.Printf("%s %d %s\n", green("✓"), ex.Number, ex.Slug)
		} else {
			bad++
			fmt.Printf("%s %d %s\n", red("✗"), ex.Number, ex.Slug)
		}
		for _, p := range problems {
			fmt.Printf("    %s\n", p)
		}
		if *verbose {
			for _, p := range passes {
				fmt.Printf("    %s %s\n", green("✓"), p)
			}
		}
	}
	fmt.Printf("%d of %d exercises pass the check\n", len(exs)-bad, len(exs))
	if bad > 0 {
		return 1
	}
	return 0
}

type checkCase struct {
	what   string
	code   []byte
	expect string // "" for must pass, "fail" for must fail, else the oracle
}

func checkExercise(eng *judge.Engine, ex *judge.Exercise) (problems, passes []string) {
	cases := []checkCase{{"solution", ex.Solution, ""}, {"starter", ex.Starter, "fail"}}
	for _, m := range ex.Mutants {
		cases = append(cases, checkCase{"mutant " + m.Name, m.Code, m.Expect})
	}
	verdicts := make([]*judge.Verdict, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			verdicts[i] = eng.Judge(context.Background(), judge.Submission{Exercise: ex, Code: c.code, FileName: ex.FileName(), Mode: judge.ModeSubmit})
		}()
	}
	wg.Wait()
	for i, c := range cases {
		v := verdicts[i]
		first := firstFailure(v)
		switch {
		case v.Outcome == judge.OutcomeInternalError || v.Outcome == judge.OutcomeCompileError:
			problems = append(problems, fmt.Sprintf("%s: %s %s", c.what, v.Outcome, diagText(v)))
		case c.expect == "" && v.Outcome != judge.OutcomeAccepted:
			problems = append(problems, fmt.Sprintf("%s fails %q: %s %s", c.what, first.Name, first.Oracle, first.Message))
		case c.expect == "":
			passes = append(passes, c.what+" passes every test")
		case v.Outcome == judge.OutcomeAccepted:
			problems = append(problems, c.what+" passes every test but must fail")
		case c.expect != "fail" && first.Oracle != c.expect:
			problems = append(problems, fmt.Sprintf("%s fails first on %q with %s, not %s: %s", c.what, first.Name, first.Oracle, c.expect, first.Message))
		default:
			passes = append(passes, fmt.Sprintf("%s fails %q (%s)", c.what, first.Name, first.Oracle))
		}
	}
	// Every fault a test plans must fire for the solution.
	if sol := verdicts[0]; sol.Outcome == judge.OutcomeAccepted {
		for i, t := range ex.Suite.Tests {
			for _, f := range t.Faults {
				if !slices.Contains(sol.Tests[i].FaultClasses, f) {
					problems = append(problems, fmt.Sprintf("test %q plans fault %s, but it never fired for the solution (seed %d)", t.Name, f, sol.Seed))
				}
			}
		}
	}
	return problems, passes
}

func firstFailure(v *judge.Verdict) judge.TestResult {
	for _, t := range v.Tests {
		if t.Status != judge.StatusPass {
			return t
		}
	}
	return judge.TestResult{}
}

func diagText(v *judge.Verdict) string {
	var parts []string
	for _, d := range v.Diagnostics {
		parts = append(parts, fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Message))
	}
	if len(parts) == 0 {
		return v.Message
	}
	return strings.Join(parts, "; ")
}
