package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// compile builds and compiles code for the tests' engine.
func compile(t *testing.T, eng *Engine, code []byte, file string) *sandbox.Module {
	t.Helper()
	wasm, _, err := eng.build(context.Background(), code, file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	mod, _, err := eng.rt.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.rt.Release(mod) })
	return mod
}

// runGenerated runs every generated scenario of ex at each seed, at most
// GOMAXPROCS at once, and returns the failures' descriptions by seed.
func runGenerated(eng *Engine, mod *sandbox.Module, ex *exercise.Exercise, seeds []uint64, file string) map[uint64][]string {
	var mu sync.Mutex
	out := map[uint64][]string{}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, seed := range seeds {
		for _, gt := range generatedTests(ex.Suite, seed, "") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				r := runTest(context.Background(), startWasm(eng.rt, mod), ex, gt, seed, file)
				if r.Status != verdict.StatusPass {
					mu.Lock()
					out[seed] = append(out[seed], fmt.Sprintf("%s: %s: %s\n%s", gt.Name, r.Oracle, r.Message, gt.YAML()))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return out
}

// genSeeds is how many seeds the generated scenarios are tried at: 20,
// or GEN_SEEDS while developing.
func genSeeds() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("GEN_SEEDS"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 20
}

func seedsUpTo(n uint64) []uint64 {
	var s []uint64
	for i := uint64(1); i <= n; i++ {
		s = append(s, i)
	}
	return s
}

// No correct solution is rejected: each reference solution passes every
// generated scenario at seeds 1 to 20.
func TestSolutionsPassGeneratedScenarios(t *testing.T) {
	eng := engine(t)
	for _, ex := range catalog(t).Exercises {
		if ex.Suite.Generate == nil {
			t.Errorf("%s: no generate: block", ex.ID())
			continue
		}
		t.Run(ex.ID(), func(t *testing.T) {
			mod := compile(t, eng, ex.Solution, "solution.go")
			for seed, fails := range runGenerated(eng, mod, ex, seedsUpTo(genSeeds()), "solution.go") {
				t.Errorf("seed %d:\n%s", seed, strings.Join(fails, "\n"))
			}
		})
	}
}

// Bugs that the named tests let through and generated scenarios catch,
// at every seed from 1 to 5: testdata/gen/ID-NAME.go, each a reference
// solution with one realistic mistake.
func TestGeneratedScenariosCatchBugs(t *testing.T) {
	eng := engine(t)
	files, _ := filepath.Glob("testdata/gen/*.go")
	if len(files) < 4 {
		t.Fatalf("%d bug files", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".go"), func(t *testing.T) {
			ex, err := catalog(t).Find(name[:3])
			if err != nil {
				t.Fatal(err)
			}
			code, _ := os.ReadFile(f)
			mod := compile(t, eng, code, name)
			for _, nt := range ex.Suite.Tests {
				if r := runTest(context.Background(), startWasm(eng.rt, mod), ex, nt, 1, name); r.Status != verdict.StatusPass {
					t.Fatalf("the named test %q already catches it (%s: %s): it is no proof of the generator", nt.Name, r.Oracle, r.Message)
				}
			}
			fails := runGenerated(eng, mod, ex, seedsUpTo(5), name)
			for seed := uint64(1); seed <= 5; seed++ {
				if len(fails[seed]) == 0 {
					t.Errorf("seed %d: no generated scenario caught it", seed)
				}
			}
			if !t.Failed() {
				t.Logf("caught: %s", strings.SplitN(fails[1][0], "\n", 2)[0])
			}
		})
	}
}

// A failing generated scenario comes back shrunk and printed; the print
// parses back to the same scenario, fails the same way when replayed
// alone (judge test --scenario) and when pasted into tests.yaml, and the
// verdict is byte-identical when judged again.
func TestShrunkScenarioReplaysAndPastes(t *testing.T) {
	eng := engine(t)
	ex, err := catalog(t).Find("171")
	if err != nil {
		t.Fatal(err)
	}
	code, _ := os.ReadFile("testdata/gen/171-counts-terminating.go")
	judgeIt := func(sub Submission) (*verdict.Verdict, string) {
		eng.mu.Lock()
		eng.verdicts = newLRU[*verdict.Verdict](maxCachedVerdicts) // judge again, not from the cache
		eng.mu.Unlock()
		v := eng.Judge(context.Background(), sub)
		c := *v
		c.Timings = verdict.Timings{}
		b, _ := json.Marshal(&c)
		return v, string(b)
	}
	// The generated scenario that catches it, judged alone (a regression
	// scenario, which runs first, may catch it too).
	all, _ := judgeIt(Submission{Exercise: ex, Code: code, FileName: "bug.go", Seed: 3})
	var only string
	for _, r := range all.Tests {
		if ex.IsGeneratedTest(r.Name) && r.Status != verdict.StatusPass {
			only = r.Name
			break
		}
	}
	sub := Submission{Exercise: ex, Code: code, FileName: "bug.go", Seed: 3, Only: only}
	v, js := judgeIt(sub)
	if _, again := judgeIt(sub); again != js {
		t.Fatal("the same code and seed gave two different verdicts")
	}
	first := v.FirstFailure()
	if !ex.IsGeneratedTest(first.Name) || first.Shrunk == nil || first.Scenario == "" {
		t.Fatalf("want a shrunk generated scenario first, got %+v", first)
	}
	orig := generatedTests(ex.Suite, 3, first.Name)[0]
	sc, err := exercise.ParseScenario("printed", []byte(first.Scenario), Checks)
	if err != nil {
		t.Fatalf("%v\n%s", err, first.Scenario)
	}
	if sc.YAML() != first.Scenario {
		t.Fatalf("parsed back, it prints otherwise:\n%s\nvs\n%s", sc.YAML(), first.Scenario)
	}
	if size := func(t *exercise.Test) int { return len(t.Steps) + len(t.Parsed) + len(t.Faults) }; size(sc) >= size(orig) {
		t.Errorf("not shrunk: %d steps, %d objects, %d faults (from %d, %d, %d)",
			len(sc.Steps), len(sc.Parsed), len(sc.Faults), len(orig.Steps), len(orig.Parsed), len(orig.Faults))
	}
	// Replayed alone, at other seeds: its own seed makes the same run, and
	// it fails as the test it was shrunk from did (the same oracle; the
	// words may differ, its world being smaller).
	rv, _ := judgeIt(Submission{Exercise: ex, Code: code, FileName: "bug.go", Seed: 99, Scenario: []byte(first.Scenario)})
	rv5, _ := judgeIt(Submission{Exercise: ex, Code: code, FileName: "bug.go", Seed: 5, Scenario: []byte(first.Scenario)})
	if len(rv.Tests) != 1 || rv.Tests[0].Oracle != first.Oracle || len(rv5.Tests) != 1 || rv5.Tests[0].Message != rv.Tests[0].Message {
		t.Fatalf("replayed: %+v\nat seed 5: %+v\nwant %s", rv.Tests, rv5.Tests, first.Oracle)
	}
	// Pasted under tests: as it is.
	src, err := os.ReadFile("../exercises/controller-pattern/171-reconcile-loop/tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(src), "\ntests:\n") + len("\ntests:") // as the first test

	pasted := string(src[:i]) + "\n" + strings.TrimSuffix(first.Scenario, "\n") + string(src[i:])
	s, err := exercise.ParseSuite("tests.yaml", []byte(pasted), Checks)
	if err != nil {
		t.Fatalf("pasted: %v", err)
	}
	pt := s.Tests[0]
	mod := compile(t, eng, code, "bug.go")
	if r := runTest(context.Background(), startWasm(eng.rt, mod), &exercise.Exercise{Number: 171, Slug: ex.Slug, Suite: s}, pt, 5, "bug.go"); r.Oracle != rv.Tests[0].Oracle || r.Message != rv.Tests[0].Message {
		t.Fatalf("pasted and run: %s: %s\nwant %s: %s", r.Oracle, r.Message, rv.Tests[0].Oracle, rv.Tests[0].Message)
	}
}

func TestGenerateBlockIsChecked(t *testing.T) {
	y := "controller: {for: Deployment}\nmodel: deployment\ngenerate: {scenarios: 2, stepKinds: [scale, config-edit]}\n" +
		"tests:\n- name: t\n  sample: true\n  objects: \"\"\n"
	if _, err := exercise.ParseSuite("t.yaml", []byte(y), Checks); err == nil || !strings.Contains(err.Error(), `"config-edit" is none of the deployment model's: scale (change a Deployment's replicas)`) {
		t.Fatalf("err = %v", err)
	}
	y = strings.Replace(y, "name: t\n", "name: generated 1\n", 1)
	y = strings.Replace(y, ", config-edit", "", 1)
	if _, err := exercise.ParseSuite("t.yaml", []byte(y), Checks); err == nil || !strings.Contains(err.Error(), "kept for generated scenarios") {
		t.Fatalf("err = %v", err)
	}
}

// The same seed draws the same scenarios, printed byte for byte; another
// seed draws others.
func TestGenerationIsSeeded(t *testing.T) {
	for _, ex := range catalog(t).Exercises {
		draw := func(seed uint64) string {
			var b strings.Builder
			for _, gt := range generatedTests(ex.Suite, seed, "") {
				b.WriteString(gt.YAML())
			}
			return b.String()
		}
		if a, b := draw(7), draw(7); a != b || a == draw(8) {
			t.Errorf("%s: seed 7 twice equal %v, seed 8 differs %v", ex.ID(), a == b, a != draw(8))
		}
		if g := generatedTests(ex.Suite, 7, "generated 2"); len(g) != 1 || g[0].YAML() != generatedTests(ex.Suite, 7, "")[1].YAML() {
			t.Errorf("%s: generated 2 alone differs from generated 2 among all", ex.ID())
		}
	}
}

// An engine makes a seed's scenarios once and hands every submission the
// same ones, which are those generatedTests makes.
func TestEngineKeepsGeneratedScenarios(t *testing.T) {
	ex := exercise171(t)
	e := &Engine{generated: map[generatedKey][]*exercise.Test{}}
	first := e.generatedTests(ex.Suite, 3, "")
	again := e.generatedTests(ex.Suite, 3, "")
	made := generatedTests(ex.Suite, 3, "")
	if len(first) == 0 || len(first) != len(made) {
		t.Fatalf("%d scenarios kept, %d made", len(first), len(made))
	}
	for i := range first {
		if again[i] != first[i] {
			t.Errorf("scenario %d made again", i+1)
		}
		if first[i].YAML() != made[i].YAML() {
			t.Errorf("scenario %d kept differs from the one made:\n%s\n%s", i+1, first[i].YAML(), made[i].YAML())
		}
	}
	if other := e.generatedTests(ex.Suite, 4, ""); other[0].YAML() == first[0].YAML() {
		t.Error("seed 4 got seed 3's scenarios")
	}
}
