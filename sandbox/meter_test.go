package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// meteredLearner is an untrusted file with endless work of every kind,
// in its own code and in the library's.
const meteredLearner = `package main

import (
	"crypto/sha256"
	"sort"
	"time"
)

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

func sortForever() {
	xs := make([]int, 4096)
	for {
		for i := range xs {
			xs[i] = len(xs) - i
		}
		sort.Ints(xs)
	}
}

func hashForever() {
	b := make([]byte, 1<<20)
	for {
		sha256.Sum256(b)
	}
}

func copyForever() {
	a, b := make([]byte, 8<<20), make([]byte, 8<<20)
	for {
		copy(a, b)
	}
}

func sleepHour() int64 {
	start := time.Now()
	time.Sleep(time.Hour)
	<-time.After(time.Minute)
	return int64(time.Since(start) / time.Second)
}

func hash1MiB() byte {
	s := sha256.Sum256(make([]byte, 1<<20))
	return s[0]
}

func sort100k() int {
	xs := make([]int, 100_000)
	for i := range xs {
		xs[i] = (i * 7919) % 100_003
	}
	sort.Ints(xs)
	return xs[0]
}

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

//go:wasmexport count2000
func exportCount2000() int32 { return int32(count(2000)) }

//go:wasmexport sort_forever
func exportSortForever() { sortForever() }

//go:wasmexport hash_forever
func exportHashForever() { hashForever() }

//go:wasmexport copy_forever
func exportCopyForever() { copyForever() }

//go:wasmexport goto_loop
func exportGoto() { gotoLoop() }

//go:wasmexport recurse
func exportRecurse() { recurse(0) }

//go:wasmexport walk
func exportWalk() int32 { return int32(walk(map[string]int{"a": 1, "b": 2, "c": 3})) }

//go:wasmexport count_metered
func exportCountMetered() int32 { return int32(count(1_000_000)) }

//go:wasmexport sleep_hour
func exportSleepHour() int64 { return sleepHour() }

//go:wasmexport hash_1mib
func exportHash() int32 { return int32(hash1MiB()) }

//go:wasmexport sort_100k
func exportSort() int32 { return int32(sort100k()) }

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

// stepsOf is how many steps a call of fn takes, and how many the
// instance's start took before it, counted by a shared budget.
func stepsOf(t *testing.T, fn string) (call, start int64) {
	t.Helper()
	rt, mod := metered(t)
	b := &StepBudget{Max: 1 << 40}
	inst, err := mod.Instantiate(context.Background(), rt, echoHost{}, Limits{Steps: b})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	start = b.Used()
	if _, err := inst.Call(context.Background(), fn); err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	return b.Used() - start, start
}

// Counting is exact: the same call takes the same steps every time, a
// budget of exactly that many lets it finish and one fewer stops it, and
// each iteration of a loop is one step more.
func TestStepsAreCountedExactly(t *testing.T) {
	n, start := stepsOf(t, "count1000")
	if again, _ := stepsOf(t, "count1000"); again != n {
		t.Fatalf("count1000 took %d steps, then %d", n, again)
	}
	if start < 10_000 {
		t.Fatalf("the Go runtime's start took %d steps: is it metered?", start)
	}
	if more, _ := stepsOf(t, "count2000"); more-n != 1000 {
		t.Fatalf("1000 more iterations took %d more steps, want 1000", more-n)
	}
	if res, err := callMetered(t, "count1000", Limits{Steps: &StepBudget{Max: start + n}}); err != nil || int32(res[0]) != 499500 {
		t.Fatalf("%d steps: got %v, %v; want 499500", start+n, res, err)
	}
	_, err := callMetered(t, "count1000", Limits{Steps: &StepBudget{Max: start + n - 1}})
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapFuel || trap.Steps != start+n-1 || !trap.Total {
		t.Fatalf("%d steps: got %v, want a fuel trap", start+n-1, err)
	}
	// A call's own budget, past what the start took.
	n, _ = stepsOf(t, "count_metered")
	if _, err := callMetered(t, "count_metered", Limits{CallSteps: n}); err != nil {
		t.Fatalf("%d steps a call: %v", n, err)
	}
	_, err = callMetered(t, "count_metered", Limits{CallSteps: n - 1})
	if !errors.As(err, &trap) || trap.Kind != TrapFuel || trap.Steps != n-1 || trap.Total {
		t.Fatalf("%d steps a call: got %v, want a fuel trap", n-1, err)
	}
}

// Every kind of endless work stops on its step budget, not on a clock: no
// CallTimeout is set here. Work inside the standard library and the
// runtime counts as the learner's own does, and the trap says where it
// stopped.
func TestEndlessWorkStopsOnItsBudget(t *testing.T) {
	// The name section's names: packages' slashes become underscores, and
	// what the compiler inlined is its caller's.
	for fn, where := range map[string]string{"spin": "main.", "goto_loop": "main.", "recurse": "main.recurse",
		"sort_forever": "main.", "hash_forever": "crypto_internal_fips140_sha256.", "copy_forever": "runtime.memmove"} {
		_, err := callMetered(t, fn, Limits{CallSteps: 1_000_000})
		var trap *Trap
		if !errors.As(err, &trap) || trap.Kind != TrapFuel || trap.Steps != 1_000_000 {
			t.Errorf("%s: got %v, want a fuel trap", fn, err)
			continue
		}
		if len(trap.Stack) == 0 || !strings.HasPrefix(trap.Stack[0], where) && !slices.ContainsFunc(trap.Stack, func(f string) bool { return strings.HasPrefix(f, where) }) {
			t.Errorf("%s: stopped in %q, want a frame in %s", fn, trap.Stack, where)
		}
	}
}

// A shared budget spans calls and instances, as a test's restarts do.
func TestSharedBudgetSpansInstances(t *testing.T) {
	call, start := stepsOf(t, "count1000")
	n := call + start // an instance's start counts too
	budget := &StepBudget{Max: 2*n + start + call/2}
	for i := 0; i < 2; i++ {
		if _, err := callMetered(t, "count1000", Limits{Steps: budget}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if budget.Used() != 2*n {
		t.Fatalf("used %d steps, want %d", budget.Used(), 2*n)
	}
	_, err := callMetered(t, "count1000", Limits{Steps: budget})
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapFuel || !trap.Total || trap.Steps != budget.Max {
		t.Fatalf("third call: got %v, want the shared budget spent", err)
	}
	if budget.Used() != budget.Max {
		t.Fatalf("used %d of %d", budget.Used(), budget.Max)
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

// Waiting is virtual: a sleep moves the caller's clock by as much and
// returns at once; with no way to move the clock, it spins until its step
// budget is spent, never waiting in real time.
func TestWaitingIsVirtual(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var slept []time.Duration
	res, err := callMetered(t, "sleep_hour", Limits{CallSteps: 1_000_000,
		Clock: func() time.Time { return now },
		Sleep: func(d time.Duration) { slept = append(slept, d); now = now.Add(d) }})
	if err != nil || int64(res[0]) != 3660 {
		t.Fatalf("got %v, %v; want 3660 s of virtual time", res, err)
	}
	var sum time.Duration
	for _, d := range slept {
		sum += d
	}
	if sum != time.Hour+time.Minute {
		t.Errorf("slept %v in all (%v), want 1h1m", sum, slept)
	}
	_, err = callMetered(t, "sleep_hour", Limits{CallSteps: 1_000_000, Clock: func() time.Time { return now }})
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapFuel {
		t.Fatalf("with a clock that cannot move: got %v, want a fuel trap", err)
	}
}

func TestUnsafeIsRefused(t *testing.T) {
	src := "package main\n\nimport \"unsafe\"\n\nvar _ = unsafe.Sizeof(0)\n"
	err := vetSource(Program{Main: []byte(src), MainName: "mine.go", MainPath: "learner.go", Package: "."})
	if err == nil || !strings.Contains(err.Error(), `mine.go:3:8: import "unsafe" is not allowed`) {
		t.Errorf("got %v, want unsafe refused at its line", err)
	}
}

// BenchmarkMeter measures what the meter costs, the same module compiled
// with it and without, in the interpreter the judge uses: a tight loop of
// a million additions (the worst case: nothing but the loop), and a
// SHA-256 of 1 MiB and a sort of 100,000 integers (library code):
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
	for _, metered := range []bool{false, true} {
		rt, err := NewRuntime(context.Background(), Config{Interpreter: true, noMeter: !metered})
		if err != nil {
			b.Fatal(err)
		}
		defer rt.Close(context.Background())
		mod, _, err := rt.Compile(context.Background(), wasm)
		if err != nil {
			b.Fatal(err)
		}
		for _, fn := range []string{"count_metered", "hash_1mib", "sort_100k"} {
			b.Run(fmt.Sprintf("%s/metered=%v", fn, metered), func(b *testing.B) {
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
			})
		}
	}
}

// The meter's cache changes no module: with it, cold, warm and once it
// has started again, metering writes the bytes it writes without it. The
// two modules differ in the learner's code only, as two submissions do.
func TestMeterCacheChangesNothing(t *testing.T) {
	b, _ := toolchainBuilder(t)
	var mods [][]byte
	for _, learner := range []string{meteredLearner, strings.Replace(meteredLearner, "% 100_003", "% 100_019", 1)} {
		wasm, err := b.Build(context.Background(), Program{
			Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "glue.go": []byte(meteredGlue)},
			Main:     []byte(learner),
			MainPath: "learner.go", MainName: "learner.go", Package: ".",
		})
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, wasm)
	}
	if bytes.Equal(mods[0], mods[1]) {
		t.Fatal("the two learners built the same module")
	}
	cache := newMeterCache()
	check := func(when string, m []byte) {
		t.Helper()
		want, err := meterModule(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := meterModule(m, cache)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the module metered through the cache differs", when)
		}
	}
	check("cold", mods[0])
	held := cache.bytes
	check("the second learner, most of it cached", mods[1])
	if cache.bytes <= held || cache.bytes >= 2*held {
		t.Errorf("the second module added %d bytes to the cache's %d: it should add only what differs", cache.bytes-held, held)
	}
	check("warm", mods[0])
	// Full, and missing what comes next: the first body metered starts it
	// again, and it ends holding the one module.
	cache.m, cache.bytes = map[uint64]map[string][]byte{}, maxMeterCacheBytes
	check("started again", mods[1])
	if cache.bytes == 0 || cache.bytes > held+held/10 {
		t.Errorf("after starting again the cache holds %d bytes, want about one module's %d", cache.bytes, held)
	}
}

// BenchmarkMeterModule meters a built module whole, and again through a
// warm cache, as a second submission's module is metered:
//
//	go test -run '^$' -bench MeterModule ./sandbox/
func BenchmarkMeterModule(b *testing.B) {
	builder, err := NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	var mods [][]byte
	for _, learner := range []string{meteredLearner, strings.Replace(meteredLearner, "% 100_003", "% 100_019", 1)} {
		wasm, err := builder.Build(context.Background(), Program{
			Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "glue.go": []byte(meteredGlue)},
			Main:     []byte(learner),
			MainPath: "learner.go", MainName: "learner.go", Package: ".",
		})
		if err != nil {
			b.Fatal(err)
		}
		mods = append(mods, wasm)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := meterModule(mods[1], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		cache := newMeterCache()
		if _, err := meterModule(mods[0], cache); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			// The second learner's module, its new functions metered once.
			if _, err := meterModule(mods[1], cache); err != nil {
				b.Fatal(err)
			}
		}
	})
}
