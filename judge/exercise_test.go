package judge

import (
	"ctrljudge/judge/exercise"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestCatalogLoadsBuiltInExercises(t *testing.T) {
	c := catalog(t)
	if len(c.Exercises) < 4 || len(c.Chapters) < 2 {
		t.Fatalf("%d exercises in %d chapters", len(c.Exercises), len(c.Chapters))
	}
	for _, e := range c.Exercises {
		if strings.Contains(string(e.Solution), "//go:build") || strings.Contains(string(e.Starter), "//go:build") {
			t.Errorf("%s: a learner would see the build line", e.Slug)
		}
		for _, m := range e.Mutants {
			if string(m.Code) == string(e.Solution) || !strings.HasPrefix(string(m.Code), "//") && !strings.HasPrefix(string(m.Code), "package") {
				t.Errorf("%s: mutant %s is not a variant of the solution", e.Slug, m.Name)
			}
		}
	}
	if _, err := c.Find("#0171"); err != nil {
		t.Error(err)
	}
	if _, err := c.Find("reconcile-loop"); err != nil {
		t.Error(err)
	}
	if _, err := c.Find("999"); err == nil || !strings.Contains(err.Error(), "judge list") {
		t.Errorf("unknown id: %v", err)
	}
}

// A mutant kept as a patch must still apply to the solution; when the
// solution moves on, loading says which mutant to regenerate.
func TestStaleMutantPatchIsReported(t *testing.T) {
	fsys := copy171(t)
	if _, err := exercise.LoadCatalog(fsys, Checks); err != nil {
		t.Fatalf("a copy of 171 does not load: %v", err)
	}
	sol := fsys["ch/ex/solution.go"].Data
	fsys["ch/ex/solution.go"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(string(sol), "\treturn", "\t// changed\n\treturn"))}
	_, err := exercise.LoadCatalog(fsys, Checks)
	if err == nil || !strings.Contains(err.Error(), ".patch") || !strings.Contains(err.Error(), "no longer applies") {
		t.Fatalf("a stale patch: %v", err)
	}
}

// A regression scenario in an exercise's regressions folder runs as one
// more test, at the seed it keeps; one without a seed, or named as
// another test, stops the catalog from loading.
func TestRegressionScenariosLoadAsTests(t *testing.T) {
	ex := exercise171(t)
	fsys := copy171(t)
	sc, _ := drawScenario(ex.Suite, 1, "generated 1", 3)
	sc.Name, sc.Seed = "regression: kept", 12345
	fsys["ch/ex/regressions/kept.yaml"] = &fstest.MapFile{Data: []byte(sc.YAML())}
	cat, err := exercise.LoadCatalog(fsys, Checks)
	if err != nil {
		t.Fatal(err)
	}
	named := slices.DeleteFunc(slices.Clone(ex.Suite.Tests), func(t *exercise.Test) bool { return t.Regression })
	got := cat.Exercises[0].Suite.Tests
	last := got[len(got)-1]
	if len(got) != len(named)+1 || last.Name != "regression: kept" || !last.Regression || last.SeedFor(7) != 12345 || last.Objects != sc.Objects {
		t.Fatalf("tests: %d (want %d), last %q regression=%v seed=%d", len(got), len(named)+1, last.Name, last.Regression, last.SeedFor(7))
	}
	for _, bad := range []struct {
		mutate func(*exercise.Test)
		want   string
	}{
		{func(x *exercise.Test) { x.Seed = 0 }, "keeps the seed"},
		{func(x *exercise.Test) { x.Name = ex.Suite.Tests[0].Name }, "another test is named"},
		{func(x *exercise.Test) { x.Name = "generated 2" }, "another test is named"},
	} {
		c := *sc
		bad.mutate(&c)
		fsys["ch/ex/regressions/kept.yaml"] = &fstest.MapFile{Data: []byte(c.YAML())}
		if _, err := exercise.LoadCatalog(fsys, Checks); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("want an error saying %q, got %v", bad.want, err)
		}
	}
}

// copy171 is exercise 171 alone in a chapter of its own, in memory
// (ch/ex/...).
func copy171(t *testing.T) fstest.MapFS {
	ex := exercise171(t)
	fsys := fstest.MapFS{}
	b, _ := readBuiltin("controller-pattern/chapter.md")
	fsys["ch/chapter.md"] = &fstest.MapFile{Data: b}
	dir := "controller-pattern/171-reconcile-loop/"
	for _, name := range []string{"problem.md", "starter.go", "solution.go", "tests.yaml"} {
		b, err := readBuiltin(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		fsys["ch/ex/"+name] = &fstest.MapFile{Data: b}
	}
	for _, m := range ex.Suite.Mutants {
		b, _ := readBuiltin(dir + m.File)
		fsys["ch/ex/"+m.File] = &fstest.MapFile{Data: b}
	}
	return fsys
}
