package sandbox

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// meteredLearner is an untrusted file: every function entry, loop
// iteration and goto in it costs a step.
const meteredLearner = `package main

func spin() {
	for {
	}
}

func count(n int) int {
	s := 0
	for i := 0; i < n; i++ { s += i }
	return s
}

func gotoLoop() {
L:
	goto L
}

func recurse(n int) int { return recurse(n+1) + 1 }

func walk(m map[string]int) (n int) {
	for range m {
		n++
	}
	f := func() { n++ }
	f()
	return n
}
`

// meteredGlue is trusted: it exports the learner's functions and costs
// nothing itself.
const meteredGlue = `package main

//go:wasmexport spin
func exportSpin() { spin() }

//go:wasmexport count1000
func exportCount() int32 { return int32(count(1000)) }

//go:wasmexport goto_loop
func exportGoto() { gotoLoop() }

//go:wasmexport recurse
func exportRecurse() { recurse(0) }

//go:wasmexport walk
func exportWalk() int32 { return int32(walk(map[string]int{"a": 1, "b": 2, "c": 3})) }

//go:wasmexport count_metered
func exportCountMetered() int32 { return int32(count(1_000_000)) }

// countPlain is count without the meter, for the benchmark.
func countPlain(n int) int {
	s := 0
	for i := 0; i < n; i++ { s += i }
	return s
}

//go:wasmexport count_plain
func exportCountPlain() int32 { return int32(countPlain(1_000_000)) }

func main() {}
`

var (
	meteredOnce sync.Once
	meteredMod  *Module
	meteredErr  error
)

func metered(t *testing.T) (*Runtime, *Module) {
	rt, _ := module(t)
	meteredOnce.Do(func() {
		b, err := NewBuilder()
		if err != nil {
			meteredErr = err
			return
		}
		wasm, err := b.Build(context.Background(), Program{
			Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "glue.go": []byte(meteredGlue)},
			Main:     []byte(meteredLearner),
			MainPath: "learner.go", MainName: "learner.go", Package: ".",
		})
		if err != nil {
			meteredErr = err
			return
		}
		meteredMod, _, meteredErr = rt.Compile(context.Background(), wasm)
	})
	if meteredErr != nil {
		t.Fatal(meteredErr)
	}
	return rt, meteredMod
}

func callMetered(t *testing.T, fn string, lim Limits) ([]uint64, error) {
	t.Helper()
	rt, mod := metered(t)
	inst, err := mod.Instantiate(context.Background(), rt, echoHost{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	return inst.Call(context.Background(), fn)
}

// Counting is exact: count(1000) is one entry and a thousand iterations.
func TestStepsAreCountedExactly(t *testing.T) {
	if res, err := callMetered(t, "count1000", Limits{CallSteps: 1001}); err != nil || int32(res[0]) != 499500 {
		t.Fatalf("1001 steps: got %v, %v; want 499500", res, err)
	}
	_, err := callMetered(t, "count1000", Limits{CallSteps: 1000})
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapFuel || trap.Steps != 1000 || trap.Total {
		t.Fatalf("1000 steps: got %v, want a fuel trap at 1000", err)
	}
	// A range loop and a closure count too: entry, 3 iterations, the
	// closure's entry.
	if res, err := callMetered(t, "walk", Limits{CallSteps: 5}); err != nil || int32(res[0]) != 4 {
		t.Fatalf("walk in 5 steps: %v, %v", res, err)
	}
	if _, err := callMetered(t, "walk", Limits{CallSteps: 4}); !errors.As(err, &trap) || trap.Kind != TrapFuel {
		t.Fatalf("walk in 4 steps: %v", err)
	}
}

// Every kind of endless work stops on its step budget, not on a clock: no
// CallTimeout is set here.
func TestEndlessWorkStopsOnItsBudget(t *testing.T) {
	for _, fn := range []string{"spin", "goto_loop", "recurse"} {
		_, err := callMetered(t, fn, Limits{CallSteps: 100_000})
		var trap *Trap
		if !errors.As(err, &trap) || trap.Kind != TrapFuel || trap.Steps != 100_000 {
			t.Errorf("%s: got %v, want a fuel trap", fn, err)
		}
	}
}

// A shared budget spans calls and instances, as a test's restarts do.
func TestSharedBudgetSpansInstances(t *testing.T) {
	budget := &StepBudget{Max: 2500}
	for i := 0; i < 2; i++ {
		if _, err := callMetered(t, "count1000", Limits{Steps: budget}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if budget.Used() != 2002 {
		t.Fatalf("used %d steps, want 2002", budget.Used())
	}
	_, err := callMetered(t, "count1000", Limits{Steps: budget})
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapFuel || !trap.Total || trap.Steps != 2500 {
		t.Fatalf("third call: got %v, want the shared budget spent", err)
	}
}

// The meter keeps the learner's lines and columns: a compile error after
// an inserted step is reported where the learner wrote it.
func TestMeteringKeepsPositions(t *testing.T) {
	b, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		t.Skip("builds WebAssembly")
	}
	src := "package main\n\nfunc f() { for { var x int = \"s\"; _ = x } }\n\nfunc main() {}\n"
	_, err = b.Build(context.Background(), Program{
		Files: map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n")},
		Main:  []byte(src), MainPath: "learner.go", MainName: "mine.go", Package: ".",
	})
	var be *BuildError
	if !errors.As(err, &be) || len(be.Diagnostics) == 0 {
		t.Fatalf("got %v, want a compile error", err)
	}
	d := be.Diagnostics[0]
	if d.File != "mine.go" || d.Line != 3 || d.Column != 30 {
		t.Fatalf("reported at %s, want mine.go:3:30", d)
	}
}

func TestReservedNamesAndUnsafeAreRefused(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"package main\n\nvar ctrljudgeFuel int32\n", "mine.go:3:5: the name ctrljudgeFuel is reserved"},
		{"package main\n\nfunc f() { CtrlJudgeStep() }\n", "mine.go:3:12: the name CtrlJudgeStep is reserved"},
		{"package main\n\nimport \"unsafe\"\n\nvar _ = unsafe.Sizeof(0)\n", `mine.go:3:8: import "unsafe" is not allowed`},
	} {
		_, _, err := meter([]byte(c.src), "mine.go")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}

// BenchmarkMeter measures the meter's worst case, a tight loop of a million
// iterations with one addition each, metered and not, in the interpreter
// the judge uses:
//
//	go test -run '^$' -bench Meter ./sandbox/
func BenchmarkMeter(b *testing.B) {
	builder, err := NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	wasm, err := builder.Build(context.Background(), Program{
		Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "glue.go": []byte(meteredGlue)},
		Main:     []byte(meteredLearner),
		MainPath: "learner.go", MainName: "learner.go", Package: ".",
	})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := NewRuntime(context.Background(), Config{Interpreter: true})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(context.Background())
	mod, _, err := rt.Compile(context.Background(), wasm)
	if err != nil {
		b.Fatal(err)
	}
	for _, fn := range []string{"count_plain", "count_metered"} {
		b.Run(fn, func(b *testing.B) {
			inst, err := mod.Instantiate(context.Background(), rt, echoHost{}, Limits{})
			if err != nil {
				b.Fatal(err)
			}
			defer inst.Close(context.Background())
			for b.Loop() {
				if _, err := inst.Call(context.Background(), fn); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/iteration")
		})
	}
}
