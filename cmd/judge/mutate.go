package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
)

// mutateExercises is `judge check --mutate`: for each exercise, the share of
// generated mutants of its solution that the tests reject, and every
// survivor with its diff and the equivalent.yaml entry that would list it.
func mutateExercises(eng *judge.Engine, dir string, exs []*exercise.Exercise, verbose bool) int {
	var fsys fs.FS = exercises.FS
	if dir != "" {
		fsys = os.DirFS(dir)
	}
	code := 0
	for _, ex := range exs {
		eqs, err := exercise.LoadEquivalents(fsys, ex)
		if err != nil {
			return fail("%v", err)
		}
		progress := func(done, total int) {
			fmt.Fprintf(os.Stderr, "\r%d %s: judged %d of %d mutants", ex.Number, ex.Slug, done, total)
			if done == total {
				fmt.Fprintln(os.Stderr)
			}
		}
		r, err := eng.Mutate(context.Background(), ex, judge.MutateOptions{Equivalents: eqs, Progress: progress})
		if err != nil {
			return fail("%d %s: %v", ex.Number, ex.Slug, err)
		}
		fmt.Printf("%d %s: %d mutants: %d killed, %d survived, %d equivalent, %d did not compile, %d duplicates",
			ex.Number, ex.Slug, r.Generated, r.Killed, r.Survived, r.Equivalent, r.NoCompile, r.Identical)
		if r.NotJudged > 0 {
			fmt.Printf(", %d not judged", r.NotJudged)
		}
		fmt.Printf("\n    kill rate %.1f %% (%d of %d)\n", 100*r.KillRate(), r.Killed, r.Killed+r.Survived)
		for _, m := range r.Results {
			switch {
			case m.Status == judge.MutantSurvived:
				code = 1
				fmt.Printf("\n  %s survived  solution.go:%d\n", red("✗"), m.Line)
				fmt.Printf("    # for %s, if it cannot change behaviour:\n", exercise.EquivalentFile)
				fmt.Printf("    - {op: %s, line: %q, index: %d, reason: \"...\"}\n", m.Key.Op, m.Key.Line, m.Key.N)
				fmt.Print(indent(m.Diff, "    "))
			case m.Status == judge.MutantNotJudged:
				code = 1
				fmt.Printf("\n  ? not judged  solution.go:%d %s: %s\n", m.Line, m.Key, m.Reason)
			case m.Status == judge.MutantEquivalent && verbose:
				fmt.Printf("  = equivalent  solution.go:%d %s: %s\n", m.Line, m.Key, m.Reason)
			case m.Status == judge.MutantKilled && verbose:
				fmt.Printf("  %s killed  solution.go:%d %s by %q (%s)\n", green("✓"), m.Line, m.Key, m.KilledBy, m.Oracle)
			}
		}
		for _, q := range r.Stale {
			code = 1
			fmt.Printf("  stale %s entry: %s matches no generated mutant\n", exercise.EquivalentFile, q.MutantKey)
		}
	}
	return code
}

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(by + l)
		}
	}
	return b.String()
}
