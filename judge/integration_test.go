package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"ctrljudge/exercises"
	"ctrljudge/judge/cluster"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// These tests compile real learner code to WebAssembly and judge it in
// wazero, as a learner's submission would be.

var (
	engineOnce sync.Once
	testEngine *Engine
	engineErr  error
)

func engine(t *testing.T) *Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles to WebAssembly; skipped with -short")
	}
	engineOnce.Do(func() { testEngine, engineErr = NewEngine(Options{}) })
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return testEngine
}

func catalog(t *testing.T) *exercise.Catalog {
	t.Helper()
	c, err := exercise.LoadCatalog(exercises.FS, Checks)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func exercise171(t *testing.T) *exercise.Exercise {
	ex, err := catalog(t).Find("171")
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestLearnerFiles judges each testdata/learner/*.txtar: a learner file
// and the verdict it must get ("want": outcome, oracle, message and
// output substrings, diagnostics, truncation).
func TestLearnerFiles(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	files, _ := filepath.Glob("testdata/learner/*.txtar")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want, code []byte
			var name string
			for _, file := range ar.Files {
				if file.Name == "want" {
					want = file.Data
				} else {
					name, code = file.Name, file.Data
				}
			}
			// "rules: none" judges the fixture without the rules the
			// statement makes about every call, for a fixture that tests
			// something those rules would stop first.
			ex := ex
			if bytes.Contains(want, []byte("\nrules: none\n")) || bytes.HasPrefix(want, []byte("rules: none\n")) {
				cp, suite := *ex, *ex.Suite
				suite.Rules = exercise.Rules{}
				cp.Suite = &suite
				ex = &cp
			}
			// Samples only, as each fixture fails on the first anyway,
			// unless it says "mode: submit".
			mode := verdict.ModeRun
			if bytes.Contains(want, []byte("\nmode: submit\n")) || bytes.HasPrefix(want, []byte("mode: submit\n")) {
				mode = verdict.ModeSubmit
			}
			v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, FileName: name, Mode: mode})
			first := v.FirstFailure()
			for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				key, val, _ := strings.Cut(line, ": ")
				switch key {
				case "outcome":
					if string(v.Outcome) != val {
						t.Errorf("outcome %s, want %s (%s %s: %s)", v.Outcome, val, v.Summary(), first.Oracle, first.Message)
					}
				case "oracle":
					if string(first.Oracle) != val {
						t.Errorf("first failing oracle %q, want %q (%s)", first.Oracle, val, first.Message)
					}
				case "message":
					if !strings.Contains(first.Message, val) {
						t.Errorf("message %q lacks %q", first.Message, val)
					}
				case "output":
					if !strings.Contains(first.Output, val) {
						t.Errorf("output %q lacks %q", first.Output, val)
					}
				case "trace":
					if !slices.ContainsFunc(first.Trace, func(l verdict.TraceLine) bool { return strings.Contains(l.Event, val) }) {
						t.Errorf("no trace line has %q: %+v", val, first.Trace)
					}
				case "verdict-max-bytes":
					b, _ := json.Marshal(v)
					if max, _ := strconv.Atoi(val); len(b) > max {
						t.Errorf("verdict of %d bytes, more than %d", len(b), max)
					}
				case "output-truncated":
					if !first.OutputTruncated || len(first.Output) > cluster.MaxOutputBytes {
						t.Errorf("output of %d bytes, truncated=%v", len(first.Output), first.OutputTruncated)
					}
				case "any-message":
					if !slices.ContainsFunc(v.Tests, func(r verdict.TestResult) bool { return strings.Contains(r.Message, val) }) {
						t.Errorf("no test's message has %q", val)
					}
				case "rules", "mode":
				case "diagnostic":
					found := false
					for _, d := range v.Diagnostics {
						s := d.File + ":" + text.Itoa(int32(d.Line))
						if d.Column > 0 {
							s += ":" + text.Itoa(int32(d.Column))
						}
						if strings.HasPrefix(s+": "+d.Message, val) {
							found = true
						}
						if strings.Contains(d.Message, os.TempDir()) || strings.Contains(d.Message, "ctrljudge-build") {
							t.Errorf("diagnostic leaks a temporary path: %s", d.Message)
						}
					}
					if !found {
						t.Errorf("no diagnostic %q in %+v", val, v.Diagnostics)
					}
				default:
					t.Fatalf("bad want line %q", line)
				}
			}
		})
	}
}

// TestExercisesPassTheirCheck: each reference solution passes every test,
// each starter fails, each mutant fails first with the oracle it names,
// and every planned fault fires.
func TestExercisesPassTheirCheck(t *testing.T) {
	eng := engine(t)
	for _, ex := range catalog(t).Exercises {
		t.Run(ex.Slug, func(t *testing.T) {
			r := eng.Check(context.Background(), ex)
			for _, p := range r.Problems {
				t.Error(p)
			}
			if len(ex.Mutants) < 5 {
				t.Errorf("%d mutants; an exercise needs at least five", len(ex.Mutants))
			}
		})
	}
}

// The check itself must be able to fail: a "mutant" that is the solution
// passes, and the check says so.
func TestCheckCatchesAMutantThatPasses(t *testing.T) {
	eng := engine(t)
	ex := *exercise171(t)
	ex.Mutants = []exercise.Mutant{{Name: "not-a-bug", Code: ex.Solution, Expect: "safety"}}
	r := eng.Check(context.Background(), &ex)
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "mutant not-a-bug passes every test but must fail") {
		t.Fatalf("problems: %q", r.Problems)
	}
}

// The same code and seed give byte-identical JSON, from two engines that
// share no cache.
func TestSameSeedSameJSON(t *testing.T) {
	engine(t)
	ex := exercise171(t)
	var outs [][]byte
	for i := 0; i < 2; i++ {
		eng, err := NewEngine(Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, code := range [][]byte{ex.Solution, ex.Starter} {
			v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, Seed: 42})
			b, _ := json.Marshal(v)
			outs = append(outs, b)
		}
		eng.Close()
	}
	if !bytes.Equal(outs[0], outs[2]) || !bytes.Equal(outs[1], outs[3]) {
		t.Fatal("same code and seed gave different JSON")
	}
	var v verdict.Verdict
	json.Unmarshal(outs[1], &v)
	if v.Outcome != verdict.OutcomeWrongAnswer || v.Seed != 42 || len(v.FirstFailure().Trace) == 0 {
		t.Fatalf("starter verdict: %s", outs[1])
	}
}

// Run mode judges the samples only; submit judges all.
func TestRunModeJudgesSamplesOnly(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: ex.Solution, Mode: verdict.ModeRun})
	samples := 0
	for _, tt := range ex.Suite.Tests {
		if tt.Sample {
			samples++
		}
	}
	if v.Outcome != verdict.OutcomeAccepted || len(v.Tests) != samples || samples == len(ex.Suite.Tests) {
		t.Fatalf("run mode: %s with %d tests, %d samples of %d", v.Outcome, len(v.Tests), samples, len(ex.Suite.Tests))
	}
}

// A replay of one failing test by name reproduces it exactly.
func TestReplayReproducesAFailure(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	full := eng.Judge(context.Background(), Submission{Exercise: ex, Code: ex.Starter, Seed: 5})
	first := full.FirstFailure()
	if first.Name == "" || !strings.Contains(first.Replay, "--seed 5 --test '"+first.Name+"'") {
		t.Fatalf("replay command %q", first.Replay)
	}
	one := eng.Judge(context.Background(), Submission{Exercise: ex, Code: ex.Starter, Seed: 5, Only: first.Name})
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(one.Tests[0])
	if !bytes.Equal(a, b) {
		t.Fatalf("replay differs:\n%s\n%s", a, b)
	}
}

// The interpreter and the compiler must give the same verdict: the engine
// is a speed choice, never a correctness one.
func TestEnginesAgree(t *testing.T) {
	engine(t)
	ex := exercise171(t)
	var outs [][]byte
	for _, compiler := range []bool{false, true} {
		eng, err := NewEngine(Options{Compiler: compiler})
		if err != nil {
			t.Fatal(err)
		}
		v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: ex.Starter, Seed: 3})
		b, _ := json.Marshal(v)
		outs = append(outs, b)
		eng.Close()
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("interpreter and compiler disagree:\n%s\n%s", outs[0], outs[1])
	}
}

// The first failing test is shrunk to the fewest planned faults that still
// fail it the same way; here none are needed, and the replay says so.
func TestFirstFailureIsShrunk(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	// A controller that, first thing after every start, deletes a Pod.
	code := strings.Replace(string(ex.Solution), "func Reconcile(", "func reconcile(", 1) + `
var fresh = true

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	if fresh {
		fresh = false
		var pods ctrl.PodList
		if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace)); err == nil && len(pods.Items) > 0 {
			return ctrl.Result{}, c.Delete(ctx, &pods.Items[len(pods.Items)-1])
		}
	}
	return reconcile(ctx, c, req)
}
`
	name := "rolling update under restarts, crashes, duplicates and missed events"
	v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: []byte(code), Only: name})
	r := v.FirstFailure()
	if r.Name != name || r.Shrunk == nil || len(r.Shrunk.Faults) != 0 || !strings.HasSuffix(r.Shrunk.Replay, " --faults none") {
		t.Fatalf("%s %s: %s; shrunk %+v", r.Name, r.Oracle, r.Message, r.Shrunk)
	}
	again := eng.Judge(context.Background(), Submission{Exercise: ex, Code: []byte(code), Only: name, SetFaults: true})
	if f := again.FirstFailure(); f.Oracle != r.Oracle || f.Status == verdict.StatusPass {
		t.Fatalf("the shrunk case does not fail the same way: %s %s", f.Oracle, f.Message)
	}
}

func readBuiltin(name string) ([]byte, error) { return fs.ReadFile(exercises.FS, name) }
