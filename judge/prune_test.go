package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// judgeable is a piece of learner code for an exercise.
type judgeable struct {
	ex   *exercise.Exercise
	what string
	code []byte
}

// everyKnownFile is every learner file the repository holds that judging
// runs to the end: each exercise's solution, starter and mutants, the bug
// corpus, the generated scenarios' bugs, the differential fixtures and
// the solutions that call the standard library as learners often do.
// (Not testdata/learner: files that flood, loop, panic or run out of
// memory, whose runtime paths are worth compiling only when they run.)
func everyKnownFile(t *testing.T) []judgeable {
	t.Helper()
	cat := catalog(t)
	var out []judgeable
	for _, ex := range cat.Exercises {
		out = append(out, judgeable{ex, "solution", ex.Solution}, judgeable{ex, "starter", ex.Starter})
		for _, m := range ex.Mutants {
			out = append(out, judgeable{ex, "mutant " + m.Name, m.Code})
		}
	}
	find := func(id string) *exercise.Exercise {
		ex, err := cat.Find(id)
		if err != nil {
			t.Fatalf("exercise %s: %v", id, err)
		}
		return ex
	}
	for _, f := range loadCorpus(t, namedCorpus) {
		out = append(out, judgeable{find(f.exercise), "corpus " + f.name, f.code})
	}
	gen, _ := filepath.Glob("testdata/gen/*.go")
	for _, p := range gen {
		code, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := strings.Cut(filepath.Base(p), "-")
		out = append(out, judgeable{find(id), p, code})
	}
	fixtures, _ := filepath.Glob("testdata/differential/*.txtar")
	for _, p := range fixtures {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		id := "171"
		var code []byte
		for _, f := range ar.Files {
			if f.Name == "want" {
				for _, line := range strings.Split(string(f.Data), "\n") {
					if v, ok := strings.CutPrefix(line, "exercise: "); ok {
						id = strings.TrimSpace(v)
					}
				}
			} else if strings.HasSuffix(f.Name, ".go") {
				code = f.Data
			}
		}
		if code != nil {
			out = append(out, judgeable{find(id), p, code})
		}
	}
	out = append(out, commonStdFiles(t)...)
	return out
}

// commonStdFiles are the exercises' reference solutions with a fragment
// of testdata/keep each (named after the exercise), which calls the
// standard library as learners often do before the solution's Reconcile.
func commonStdFiles(t *testing.T) []judgeable {
	t.Helper()
	fragments, err := filepath.Glob("testdata/keep/*.go")
	if err != nil || len(fragments) == 0 {
		t.Fatalf("no files in testdata/keep: %v", err)
	}
	var out []judgeable
	for _, p := range fragments {
		fragment, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := strings.Cut(filepath.Base(p), "-")
		ex, err := catalog(t).Find(id)
		if err != nil {
			t.Fatal(err)
		}
		// After the solution's import block, which the fragment's own
		// imports must follow; and its Reconcile under another name.
		code := strings.Replace(string(ex.Solution), "func Reconcile(", "func solutionReconcile(", 1)
		end := strings.Index(code, "\n)\n")
		if !strings.Contains(code, "func solutionReconcile(") || end < 0 {
			t.Fatalf("%s: the solution has no import block or no Reconcile to wrap", p)
		}
		end += len("\n)\n")
		_, body, ok := strings.Cut(string(fragment), "\npackage main\n")
		if !ok {
			t.Fatalf("%s: no package clause", p)
		}
		out = append(out, judgeable{ex, p, []byte(code[:end] + body + code[end:])})
	}
	return out
}

// judgeAll judges every file in submit mode, two at a time, and returns
// the verdicts' JSON in order.
func judgeAll(eng *Engine, files []judgeable) [][]byte {
	out := make([][]byte, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], _ = json.Marshal(eng.Judge(context.Background(), Submission{Exercise: f.ex, Code: f.code, Mode: verdict.ModeSubmit}))
		})
	}
	wg.Wait()
	return out
}

// The list of library functions a learner's module is compiled with
// serves the judge's own exercises and the standard library as learners
// often call it: their solutions and starters, and the files of
// testdata/keep, never need the whole module. With CTRLJUDGE_UPDATE_KEPT_FUNCTIONS=1 the
// list is made again, from every learner file the repository holds.
func TestKeptFunctionsList(t *testing.T) {
	if os.Getenv("CTRLJUDGE_UPDATE_KEPT_FUNCTIONS") != "" {
		if testing.Short() {
			t.Skip("compiles to WebAssembly")
		}
		eng, err := NewEngine(Options{recordCalls: true})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		files := everyKnownFile(t)
		judgeAll(eng, files)
		// The SDK is kept whole (keptFunctionList).
		names := slices.DeleteFunc(eng.rt.CalledFunctions(), func(name string) bool { return strings.HasPrefix(name, "ctrljudge") })
		head := "# Made by CTRLJUDGE_UPDATE_KEPT_FUNCTIONS=1 go test -run TestKeptFunctionsList ./judge/\n"
		if err := os.WriteFile("kept_functions.txt", []byte(head+strings.Join(names, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d library functions called judging %d files", len(names), len(files))
		return
	}
	eng := engine(t)
	var files []judgeable
	for _, ex := range catalog(t).Exercises {
		files = append(files, judgeable{ex, "solution", ex.Solution}, judgeable{ex, "starter", ex.Starter})
	}
	files = append(files, commonStdFiles(t)...)
	before := eng.rt.WholeCompiles()
	verdicts := judgeAll(eng, files)
	if n := eng.rt.WholeCompiles() - before; n > 0 {
		t.Errorf("%d of the exercises' solutions and starters, and the files of testdata/keep, needed the whole module: make kept_functions.txt again (see judge/prune.go)", n)
	}
	for i, f := range files {
		if !bytes.Contains(verdicts[i], []byte(`"outcome":"accepted"`)) && f.what != "starter" {
			t.Errorf("%s %s is not accepted: %.300s", f.ex.Slug, f.what, verdicts[i])
		}
	}
	wasm, _, err := eng.build(context.Background(), files[0].code, files[0].ex.FileName())
	if err != nil {
		t.Fatal(err)
	}
	mod, _, err := eng.rt.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.rt.Release(mod)
	if mod.Pruned == 0 {
		t.Error("nothing was pruned from a solution's module")
	}
	t.Logf("%d names kept; %s's solution has %d compiled as stubs", len(keptFunctionList()), files[0].ex.Slug, mod.Pruned)
}

// A module with no runtime function kept stops in the runtime's start, in
// every test: each is played again on the whole module, and the verdicts
// are those of a module never pruned.
func TestPrunedEverywhereGivesTheSameVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles to WebAssembly")
	}
	bare, err := NewEngine(Options{keep: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	whole, err := NewEngine(Options{noPruning: true})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	var files []judgeable
	for _, ex := range catalog(t).Exercises {
		files = append(files, judgeable{ex, "solution", ex.Solution}, judgeable{ex, "starter", ex.Starter})
	}
	a, b := judgeAll(bare, files), judgeAll(whole, files)
	for i, f := range files {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("%s %s: verdicts differ\npruned: %s\nwhole:  %s", f.ex.Slug, f.what, a[i], b[i])
		}
	}
	// One per file at least (the reference solutions are compiled too).
	if n := bare.rt.WholeCompiles(); n < int64(len(files)) {
		t.Errorf("%d whole modules compiled for %d files", n, len(files))
	}
	if n := whole.rt.WholeCompiles(); n != 0 {
		t.Errorf("%d whole modules compiled without pruning", n)
	}
}
