package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

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
func runGenerated(eng *Engine, mod *sandbox.Module, ex *Exercise, seeds []uint64, file string) map[uint64][]string {
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
	if len(files) < 5 {
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
