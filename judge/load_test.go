package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// These tests hold the judge to its promise: the verdict depends on the
// code and the seed, never on how busy the machine is. Each file is
// judged by a fresh engine on an idle process, then again by another
// fresh engine while busy loops compete for every core, and the two
// verdicts must be byte-identical.

// hogCPU keeps 2 goroutines per core spinning until the returned func is
// called.
func hogCPU() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 * runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for ctx.Err() == nil {
				for i := range 1 << 16 {
					x += i
				}
			}
			_ = x
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// judgeFresh judges code with an engine of its own: no cached build or
// verdict carries over from another run.
func judgeFresh(t *testing.T, ex *exercise.Exercise, code []byte, mode verdict.Mode) *verdict.Verdict {
	t.Helper()
	eng, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	return eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, FileName: "mine.go", Mode: mode})
}

func learnerFixture(t *testing.T, name string) []byte {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/learner/" + name + ".txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name != "want" {
			return f.Data
		}
	}
	t.Fatalf("%s: no learner file", name)
	return nil
}

// slowButCorrect is 171's reference solution with 300,000 cheap steps
// of busywork at the top of every Reconcile: slow, but inside the budget.
func slowButCorrect(t *testing.T, ex *exercise.Exercise) []byte {
	t.Helper()
	sol := string(ex.Solution)
	const head = "(ctrl.Result, error) {\n"
	i := strings.Index(sol, head)
	if i < 0 {
		t.Fatal("no Reconcile in the solution")
	}
	i += len(head)
	return []byte(sol[:i] + "\tburn := 0\n\tfor i := 0; i < 300_000; i++ {\n\t\tburn += i % 7\n\t}\n\t_ = burn\n" + sol[i:])
}

func TestVerdictsDoNotDependOnLoad(t *testing.T) {
	engine(t) // skips with -short
	ex := exercise171(t)
	for _, c := range []struct {
		name        string
		code        []byte
		outcome     verdict.Outcome
		everyOracle verdict.Oracle // each test must fail with this oracle
	}{
		{"memory-bomb", learnerFixture(t, "memory-bomb"), verdict.OutcomeMemoryLimit, verdict.OracleMemory},
		{"infinite-loop", learnerFixture(t, "infinite-loop"), verdict.OutcomeTimeout, verdict.OracleTimeout},
		{"slow-but-correct", slowButCorrect(t, ex), verdict.OutcomeAccepted, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			idle := judgeFresh(t, ex, c.code, verdict.ModeRun)
			stop := hogCPU()
			loaded := judgeFresh(t, ex, c.code, verdict.ModeRun)
			stop()
			if idle.Outcome != c.outcome {
				t.Fatalf("idle: %s, want %s (%s)", idle.Outcome, c.outcome, idle.FirstFailure().Message)
			}
			for _, tr := range idle.Tests {
				if tr.Oracle != c.everyOracle {
					t.Errorf("idle: test %q failed with %q, want %q: %s", tr.Name, tr.Oracle, c.everyOracle, tr.Message)
				}
			}
			sameVerdict(t, idle, loaded)
		})
	}
}

// A first build on a cold Go cache compiles the wasip1 packages it
// imports; on a busy machine that takes long, and none of it may count
// against the learner: a correct file with heavy imports gets the same
// verdict, accepted, idle and loaded. (The engine warms the whole standard
// library before a first build; the test leaves that out, so the learner's
// own build meets the cold cache, as it would after the cache was emptied.)
func TestColdCacheBuildUnderLoad(t *testing.T) {
	engine(t) // skips with -short
	ex := exercise171(t)
	sol := string(ex.Solution)
	code := strings.Replace(sol, "import (\n", "import (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"net/url\"\n\t\"text/template\"\n", 1)
	code += "\nvar _ = fmt.Sprint(json.Valid(nil), url.QueryEscape(\"x\"), template.HTMLEscapeString(\"<\"))\n"
	judgeCold := func() *verdict.Verdict {
		t.Setenv("GOCACHE", t.TempDir())
		eng, err := NewEngine(Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		eng.noStdWarm = true
		return eng.Judge(context.Background(), Submission{Exercise: ex, Code: []byte(code), FileName: "mine.go", Mode: verdict.ModeRun})
	}
	idle := judgeCold()
	stop := hogCPU()
	loaded := judgeCold()
	stop()
	if idle.Outcome != verdict.OutcomeAccepted {
		t.Fatalf("on a cold cache: %s: %s %+v", idle.Outcome, idle.Message, idle.Diagnostics)
	}
	sameVerdict(t, idle, loaded)
}

// sameVerdict fails unless the idle and the loaded verdict are the same
// JSON to the byte.
func sameVerdict(t *testing.T, idle, loaded *verdict.Verdict) {
	t.Helper()
	a, _ := json.Marshal(idle)
	b, _ := json.Marshal(loaded)
	if !bytes.Equal(a, b) {
		t.Fatalf("the verdict changed under load:\nidle:   %s\nloaded: %s", a, b)
	}
}

// When a net stops the build, the machine was too busy, not the code
// wrong: the verdict is not_judged, and it is not cached, so the next
// attempt is judged for real. The nets are the wall clock and the
// kernel's limits; whether a kernel limit fires depends on when the
// compiler's collector ran, so the code is never charged with it. Here
// the module is larger than the build may write.
func TestBuildNetsAreNotJudgedAndNotCached(t *testing.T) {
	engine(t) // skips with -short
	ex := exercise171(t)
	for name, tighten := range map[string]func(*sandbox.BuildLimits){
		"wall clock": func(l *sandbox.BuildLimits) { l.Wall = time.Millisecond },
		"file size":  func(l *sandbox.BuildLimits) { l.FileBytes = 1 << 20 },
	} {
		t.Run(name, func(t *testing.T) {
			eng, err := NewEngine(Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			if err := eng.Warm(context.Background()); err != nil {
				t.Fatal(err)
			}
			code := append(append([]byte(nil), ex.Solution...), "\n// a new file, so no build is cached\n"...)
			sub := Submission{Exercise: ex, Code: code, FileName: "mine.go", Mode: verdict.ModeRun}
			tighten(&eng.builder.Limits)
			v := eng.Judge(context.Background(), sub)
			if v.Outcome != verdict.OutcomeNotJudged || len(v.Tests) != 0 {
				t.Fatalf("build past its net: %s (%s), want not_judged with no tests", v.Outcome, v.Message)
			}
			eng.builder.Limits = sandbox.DefaultBuildLimits()
			if v := eng.Judge(context.Background(), sub); v.Outcome != verdict.OutcomeAccepted || v.Timings.Cached {
				t.Fatalf("judged again: %s (cached %v), want accepted, judged anew", v.Outcome, v.Timings.Cached)
			}
		})
	}
}
