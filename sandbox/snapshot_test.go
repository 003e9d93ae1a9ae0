package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// snapLearner is an untrusted file whose package initialisers do what a
// snapshot must reproduce: a package-level variable built by a loop (steps),
// output on stdout and stderr, a clock reading, and, at odd seconds, a
// question to the host. report shows the state the Go runtime started
// with: map order and math/rand (seeded from the clock at start) and the
// monotonic clock (counted from the start).
const snapLearner = `package main

import (
	"fmt"
	"math/rand"
	"os"
	"time"
)

var squares = build(3000)

func build(n int) map[int]int {
	m := map[int]int{}
	for i := 0; i < n; i++ {
		m[i] = i * i
	}
	return m
}

var started = time.Now()

var calls int

// In the data section: one that init changes, one it leaves alone.
var greeting = [5]byte{'h', 'e', 'l', 'l', 'o'}
var motto = [12]byte{'s', 't', 'e', 'a', 'd', 'y', ' ', 's', 't', 'a', 't', 'e'}

func init() {
	greeting[0] = 'j'
	fmt.Println("init: squares", len(squares), "at", started.UTC().Format(time.RFC3339Nano))
	fmt.Fprintln(os.Stderr, "init: on stderr")
	if started.Second()%2 == 1 {
		fmt.Println("init: the host says", ask("odd"))
	}
}

func next() int32 {
	calls++
	return int32(calls)
}

func report() {
	var first []int
	for k := range squares {
		first = append(first, k)
		if len(first) == 5 {
			break
		}
	}
	fmt.Println("map order", first, "rand", rand.Int63(), "now", time.Now().String(), "since start", time.Since(started),
		"data", string(greeting[:]), string(motto[:]))
}
`

const snapGlue = `package main

import "unsafe"

//go:wasmimport ctrljudge call
func hostCall(op uint32, msg unsafe.Pointer, msgLen uint32, buf unsafe.Pointer, bufCap uint32) uint32

var reply [64]byte

func ask(q string) string {
	b := []byte(q)
	n := hostCall(1, unsafe.Pointer(&b[0]), uint32(len(b)), unsafe.Pointer(&reply[0]), uint32(len(reply)))
	return string(reply[:n])
}

//go:wasmexport next
func exportNext() int32 { return next() }

//go:wasmexport report
func exportReport() { report() }

func main() {}
`

var snapBuilds struct {
	sync.Mutex
	wasm map[string][]byte
}

func snapModule(t testing.TB, noSnapshots bool) (*Runtime, *Module) {
	return snapModuleOf(t, snapLearner, noSnapshots)
}

// snapModuleOf builds learner (once per text) with the glue above.
func snapModuleOf(t testing.TB, learner string, noSnapshots bool) (*Runtime, *Module) {
	t.Helper()
	return snapModuleWith(t, learner, Config{Interpreter: true, NoSnapshots: noSnapshots})
}

// snapModuleWith compiles learner's module on a new runtime of cfg.
func snapModuleWith(t testing.TB, learner string, cfg Config) (*Runtime, *Module) {
	t.Helper()
	wasm := snapWasm(t, learner)
	rt, err := NewRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	mod, _, err := rt.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return rt, mod
}

// snapWasm builds learner with the glue above, once per text.
func snapWasm(t testing.TB, learner string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("builds WebAssembly; skipped with -short")
	}
	snapBuilds.Lock()
	defer snapBuilds.Unlock()
	if wasm, ok := snapBuilds.wasm[learner]; ok {
		return wasm
	}
	b, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := b.Build(context.Background(), Program{
		Files:    map[string][]byte{"go.mod": []byte("module guest\n\ngo 1.26\n"), "glue.go": []byte(snapGlue)},
		Main:     []byte(learner),
		MainPath: "learner.go", MainName: "learner.go", Package: ".",
	})
	if err != nil {
		t.Fatal(err)
	}
	if snapBuilds.wasm == nil {
		snapBuilds.wasm = map[string][]byte{}
	}
	snapBuilds.wasm[learner] = wasm
	return wasm
}

type countingHost struct{ calls int }

func (h *countingHost) HandleCall(op uint32, msg []byte) ([]byte, error) {
	h.calls++
	return append([]byte("yes to "), msg...), nil
}

// snapStart is one instance of a scenario: the clock it starts at, its
// limits, and the calls made if it starts.
type snapStart struct {
	what  string
	at    time.Duration // after the epoch; the clock stays there unless tick
	tick  bool          // each reading moves the clock on by 1 ms (not a Limits.Clock)
	lim   Limits
	calls []string
}

// transcript starts every instance of the scenario on rt and writes down
// all that can be seen of it: errors, traps, output, steps charged, host
// calls, what the calls return and print.
func transcript(t *testing.T, rt *Runtime, mod *Module, starts []snapStart) []string {
	var out []string
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range starts {
		var buf bytes.Buffer
		host := &countingHost{}
		lim := s.lim
		lim.Output = &buf
		now := epoch.Add(s.at)
		lim.Clock = func() time.Time {
			t := now
			if s.tick {
				now = now.Add(time.Millisecond)
			}
			return t
		}
		budget := lim.Steps
		if budget == nil {
			budget = &StepBudget{Max: 1 << 40}
			lim.Steps = budget
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: ", s.what)
		inst, err := mod.Instantiate(context.Background(), rt, host, lim)
		fmt.Fprintf(&b, "start %s, %d steps", startError(err), budget.Used())
		if err == nil {
			for _, fn := range s.calls {
				res, err := inst.Call(context.Background(), fn)
				fmt.Fprintf(&b, "; %s %v %s, %d steps", fn, res, startError(err), budget.Used())
			}
			inst.Close(context.Background())
		}
		fmt.Fprintf(&b, "; %d host calls; output %q", host.calls, buf.String())
		out = append(out, b.String())
	}
	return out
}

// sameTranscripts fails the test where a start from a snapshot shows
// something a start that ran _initialize did not.
func sameTranscripts(t *testing.T, off, on []string) {
	t.Helper()
	for i := range off {
		if off[i] != on[i] {
			t.Errorf("started as before:\n%s\nfrom a snapshot:\n%s", off[i], on[i])
		} else {
			t.Log(on[i])
		}
	}
}

func startError(err error) string {
	var trap *Trap
	if errors.As(err, &trap) {
		return fmt.Sprintf("trap %s %q (steps %d, total %v)", trap.Kind, trap.Message, trap.Steps, trap.Total)
	}
	if err != nil {
		return "error " + err.Error()
	}
	return "ok"
}

// An instance started from a snapshot is indistinguishable from one that
// ran _initialize: same output, same steps charged, same state (its own
// package variables, the runtime's random state and monotonic clock for
// the instant it starts at), and the same traps where a limit would have
// stopped _initialize. Instances at a clock reading where _initialize
// asked the host, or saw the clock move, always run it. So under the
// historical random key 0 and under another, where the snapshots are
// that key's.
func TestSnapshotStartsAsInitializeDoes(t *testing.T) {
	for _, key := range []uint64{0, 0x5eed} {
		t.Run(fmt.Sprintf("key %#x", key), func(t *testing.T) { snapshotStartsAsInitializeDoes(t, key) })
	}
}

func snapshotStartsAsInitializeDoes(t *testing.T, key uint64) {
	rtOff, modOff := snapModule(t, true)
	rtOn, modOn := snapModule(t, false)
	if modOn.snaps == nil {
		t.Fatal("a Go module's globals were not exported: no snapshots")
	}

	// The steps _initialize takes, and the output it writes.
	first := &StepBudget{Max: 1 << 40}
	var initOut bytes.Buffer
	inst, err := modOff.Instantiate(context.Background(), rtOff, &countingHost{}, Limits{Steps: first, Output: &initOut, Random: key,
		Clock: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	inst.Close(context.Background())
	initSteps := first.Used()
	if initSteps < 3000 || !strings.Contains(initOut.String(), "init: squares 3000") {
		t.Fatalf("_initialize took %d steps and wrote %q", initSteps, initOut.String())
	}

	calls := []string{"next", "next", "report"}
	// Two instances fit in the shared budget, with the 8 steps of their
	// calls; the third's _initialize does not, by one step.
	shared := &StepBudget{Max: 3*initSteps + 2*8 - 1}
	starts := []snapStart{
		{what: "first at 0s", calls: calls},
		{what: "again at 0s", calls: calls},
		{what: "at 2s", at: 2 * time.Second, calls: calls},
		{what: "again at 2s", at: 2 * time.Second, calls: calls},
		{what: "at 1s, asks the host", at: time.Second, calls: calls},
		{what: "again at 1s", at: time.Second, calls: calls},
		{what: "a call's budget below _initialize's steps", lim: Limits{CallSteps: initSteps - 1}, calls: calls},
		{what: "a call's budget of exactly its steps", lim: Limits{CallSteps: initSteps}, calls: []string{"next"}},
		{what: "shared budget, 1", lim: Limits{Steps: shared}, calls: calls},
		{what: "shared budget, 2", lim: Limits{Steps: shared}, calls: calls},
		{what: "shared budget, 3", lim: Limits{Steps: shared}, calls: calls},
		{what: "output limit below _initialize's output", lim: Limits{MaxOutputBytes: int64(initOut.Len() - 1)}},
		{what: "output limit of exactly its output", lim: Limits{MaxOutputBytes: int64(initOut.Len())}, calls: []string{"next"}},
		{what: "last at 0s", calls: calls},
	}
	for i := range starts {
		starts[i].lim.Random = key
	}
	off := transcript(t, rtOff, modOff, starts)
	shared.used = 0
	on := transcript(t, rtOn, modOn, starts)
	sameTranscripts(t, off, on)

	// The transcripts show what they must, and the snapshots were used.
	for _, want := range []string{
		"first at 0s: start ok, " + fmt.Sprint(initSteps) + " steps; next [1] ok",
		"again at 0s: start ok, " + fmt.Sprint(initSteps) + " steps; next [1] ok",
		"at 1s, asks the host: start ok", "1 host calls", "init: the host says yes to odd",
		"a call's budget below _initialize's steps: start trap fuel",
		"shared budget, 3: start trap fuel", "total true",
		"output limit below _initialize's output: start trap output_limit",
		"init: on stderr", "data jello steady state",
	} {
		if !strings.Contains(strings.Join(on, "\n"), want) {
			t.Errorf("no %q in the transcript", want)
		}
	}
	if off[0][strings.Index(off[0], "map order"):] == off[2][strings.Index(off[2], "map order"):] {
		t.Error("instances started 2 s apart report the same runtime state; the test cannot tell snapshots apart")
	}
	// Restored: again at 0s and 2s, the budget of exactly its steps,
	// shared 1 and 2, the output limit of exactly its output, last at 0s.
	if n := modOn.snaps.started.Load(); n != 7 {
		t.Errorf("%d instances started from a snapshot, want 7", n)
	}
	if _, ok := modOn.snaps.keys[key]; !ok || len(modOn.snaps.keys) != 1 {
		t.Errorf("snapshots kept under %d random keys, want 1, key %#x", len(modOn.snaps.keys), key)
	}
	if n := modOff.snaps; n != nil {
		t.Error("NoSnapshots kept snapshots")
	}
	// The data _initialize left alone is not kept (the instance's memory
	// holds it from instantiation); what it changed is.
	var same, changed int
	for i, c := range modOn.snaps.first.chunks {
		if uint32(i*chunkBytes) < modOn.snaps.start.end {
			if c == nil {
				same++
			} else {
				changed++
			}
		}
	}
	if same == 0 || changed == 0 {
		t.Errorf("of the data's chunks, the snapshot keeps %d and leaves %d to instantiation", changed, same)
	}

	// A clock that moves as it is read breaks Limits.Clock's contract;
	// where _initialize saw it move, it runs in every instance, as it did.
	before := modOn.snaps.started.Load()
	ticking := transcript(t, rtOn, modOn, []snapStart{
		{what: "a clock that moves", at: 10 * time.Second, tick: true, lim: Limits{Random: key}, calls: calls},
		{what: "a clock that moves", at: 10 * time.Second, tick: true, lim: Limits{Random: key}, calls: calls},
	})
	if n := modOn.snaps.started.Load(); n != before || ticking[0] != ticking[1] || !strings.Contains(ticking[1], "start ok") {
		t.Errorf("with a moving clock, %d instances started from a snapshot:\n%s\n%s", n-before, ticking[0], ticking[1])
	}
}

// Initialisers that never read the wall clock start alike at any instant:
// one snapshot serves every instance, whenever it starts, and what the
// instances show (map order, math/rand, the monotonic clock, output, steps)
// is what each would show after its own _initialize.
func TestOneSnapshotServesEveryInstant(t *testing.T) {
	learner := strings.Replace(snapLearner, "var started = time.Now()", "var started time.Time", 1)
	if learner == snapLearner {
		t.Fatal("the clock-free learner is the same file")
	}
	rtOff, modOff := snapModuleOf(t, learner, true)
	rtOn, modOn := snapModuleOf(t, learner, false)
	calls := []string{"next", "report", "next", "report"}
	starts := []snapStart{
		{what: "at 0s", calls: calls},
		{what: "at 1s", at: time.Second, calls: calls},
		{what: "at 2s", at: 2 * time.Second, calls: calls},
		{what: "an hour on", at: time.Hour, calls: calls},
		{what: "at 0s again", calls: calls},
	}
	off := transcript(t, rtOff, modOff, starts)
	on := transcript(t, rtOn, modOn, starts)
	sameTranscripts(t, off, on)
	for _, line := range on {
		// time.Now's monotonic reading counts from the runtime's start,
		// which a snapshot taken at another instant would put elsewhere.
		if !strings.Contains(line, "m=+0.000000001 ") {
			t.Errorf("the monotonic clock does not count from the instance's start: %s", line)
		}
	}
	if n := modOn.snaps.started.Load(); n != int64(len(starts)-1) {
		t.Errorf("%d instances started from a snapshot, want %d: one _initialize for all", n, len(starts)-1)
	}
	if k := modOn.snaps.keys[0]; k == nil || len(k.byClock) != 0 {
		t.Errorf("no snapshots under key 0, or a snapshot per clock reading for initialisers that read no wall clock: %+v", k)
	}
}

// Instances started at once on a new module, one a core as a
// submission's tests are, wait for the first `_initialize` rather than run
// their own, and start from its snapshot. A first that fails hands the
// watch on: it is not waited for in vain.
func TestInstancesStartedAtOnceRunInitializeOnce(t *testing.T) {
	learner := strings.Replace(snapLearner, "var started = time.Now()", "var started time.Time", 1)
	for _, failFirst := range []bool{false, true} {
		rt, mod := snapModuleOf(t, learner, false)
		epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lim := Limits{Clock: func() time.Time { return epoch }, Steps: &StepBudget{Max: 1 << 40}}
				if failFirst && i == 0 {
					lim.Steps.Max = 1000 // stops inside `_initialize`
				}
				inst, err := mod.Instantiate(context.Background(), rt, &countingHost{}, lim)
				errs[i] = err
				if err == nil {
					inst.Close(context.Background())
				}
			}()
		}
		wg.Wait()
		failed := 0
		for _, err := range errs {
			if err != nil {
				failed++
			}
		}
		want := int64(n - 1)
		if failFirst {
			if failed == 0 {
				t.Fatal("the instance with 1,000 steps started")
			}
			// The failed one may have watched, or started the old way
			// after another's watch: either way one `_initialize` serves
			// every other instance.
			want = n - 2
		}
		if failed > 1 || (!failFirst && failed > 0) {
			t.Fatalf("failFirst=%v: %d instances failed to start: %v", failFirst, failed, errs)
		}
		if got := mod.snaps.started.Load(); got != want {
			t.Errorf("failFirst=%v: %d of %d instances started from a snapshot, want %d", failFirst, got, n, want)
		}
	}
}

// BenchmarkStart starts an instance of the module above by running
// _initialize, and from a snapshot:
//
//	go test -run '^$' -bench Start ./sandbox/
//
// START_WASM=file.wasm starts that module instead (a learner's, from the
// judge's cache folder, say), and START_KEEP=file prunes it as the judge
// does, keeping the names listed there (judge/kept_functions.txt).
func BenchmarkStart(b *testing.B) {
	for _, mode := range []string{"initialize", "snapshot"} {
		b.Run(mode, func(b *testing.B) {
			var rt *Runtime
			var mod *Module
			if file := os.Getenv("START_WASM"); file != "" {
				wasm, err := os.ReadFile(file)
				if err != nil {
					b.Fatal(err)
				}
				cfg := Config{Interpreter: true, NoSnapshots: mode == "initialize"}
				if file := os.Getenv("START_KEEP"); file != "" {
					list, err := os.ReadFile(file)
					if err != nil {
						b.Fatal(err)
					}
					cfg.Keep = []string{}
					for line := range strings.Lines(string(list)) {
						if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
							cfg.Keep = append(cfg.Keep, line)
						}
					}
				}
				if rt, err = NewRuntime(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
				defer rt.Close(context.Background())
				if mod, _, err = rt.Compile(context.Background(), wasm); err != nil {
					b.Fatal(err)
				}
			} else {
				rt, mod = snapModule(b, mode == "initialize")
			}
			clock := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
			for b.Loop() {
				inst, err := mod.Instantiate(context.Background(), rt, &countingHost{}, Limits{Clock: clock})
				if err != nil {
					b.Fatal(err)
				}
				inst.Close(context.Background())
			}
		})
	}
}

// holds compares a stretch of memory with the memory at instantiation:
// the data segments' bytes where they are, zeros around and past them.
func TestMemoryAtStartHolds(t *testing.T) {
	a := &atStart{segs: []dataSegment{{off: 4, init: []byte("abc")}, {off: 10, init: []byte("xyz")}}, end: 13}
	image := []byte("\x00\x00\x00\x00abc\x00\x00\x00xyz\x00\x00\x00")
	for off := range len(image) {
		for end := off; end <= len(image); end++ {
			if !a.holds(uint32(off), image[off:end]) {
				t.Errorf("[%d, %d) of the start image does not hold", off, end)
			}
			for i := off; i < end; i++ { // one byte changed anywhere
				b := slices.Clone(image[off:end])
				b[i-off] ^= 1
				if a.holds(uint32(off), b) {
					t.Errorf("[%d, %d) with byte %d changed holds", off, end, i)
				}
			}
		}
	}
	if !(&atStart{}).holds(0, make([]byte, 8)) || (&atStart{}).holds(0, []byte{0, 1}) {
		t.Error("a module without data: only zeros hold")
	}
}
