package main

import (
	"context"
	"fmt"
)

// cmdCheck is the author's gate for exercises: the solution must pass
// every test, the starter must fail, each mutant must fail with the oracle
// it names, and every fault a test asks for must fire at least once for
// the solution (a planned fault that never fires tests nothing).
func cmdCheck(args []string) int {
	fs, dir := newFlags("check")
	verbose := fs.Bool("v", false, "show passing checks too")
	mutate := fs.Bool("mutate", false, "mutation score: judge generated variants of solution.go and report those the tests miss")
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
	if *mutate {
		return mutateExercises(eng, *dir, exs, *verbose)
	}
	bad := 0
	for _, ex := range exs {
		r := eng.Check(context.Background(), ex)
		problems, passes := r.Problems, r.Passes
		if len(problems) == 0 {
			fmt.Printf("%s %d %s\n", green("✓"), ex.Number, ex.Slug)
		} else {
			bad++
			fmt.Printf("%s %d %s\n", red("✗"), ex.Number, ex.Slug)
		}
		if c := r.Coverage; c != nil && len(c.Missing) == 0 {
			fmt.Printf("    input space: %s\n", c)
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
