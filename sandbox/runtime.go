package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

const (
	// memoryLimitPages caps a module's linear memory at 64 MiB. A Go
	// module needs about 3 MiB after start.
	memoryLimitPages = 1024
	// maxMessageBytes bounds one message in either direction.
	maxMessageBytes = 4 << 20
	// stderrTailBytes is how much of stderr is kept to explain a trap.
	stderrTailBytes = 16 << 10
	// maxCachedModules bounds the compiled modules kept in memory once
	// nobody uses them. The interpreter's code for a Go module of 2.4 MB
	// holds about 50 MiB of heap, so each one kept makes the heap the
	// garbage collector tends that much larger, and each compile past it
	// pages in fresh memory (RATIONALE.md, "Why keep four compiled
	// modules?").
	maxCachedModules = 4
	hostModuleName   = "ctrljudge"
)

// Config configures a Runtime.
type Config struct {
	// CacheDir persists compiled code across processes ("" keeps it in
	// memory only). The folder must be private to the judge.
	CacheDir string
	// Interpreter selects wazero's interpreter instead of its compiler.
	Interpreter bool
	// NoSnapshots starts every instance by running the module's
	// `_initialize`, never from a snapshot of an earlier instance's start
	// (snapshot.go); the instances behave the same either way.
	NoSnapshots bool
	// Keep, if not nil, names the only functions worth compiling besides
	// the program's own package (prune.go): the others are compiled as
	// stubs that stop an instance with TrapPruned, and Whole gives the
	// module compiled in full. Names are as in the module's name section;
	// one that ends in "*" keeps every function whose name begins with
	// the rest.
	Keep []string
	// RecordCalls records the name of every function an instance calls
	// (CalledFunctions), which is how a Keep list is made. It slows every
	// call.
	RecordCalls bool
	// noMeter leaves modules unmetered: for measuring the meter's cost.
	noMeter bool
}

// Runtime compiles and instantiates modules. It is safe for concurrent use.
type Runtime struct {
	rt          wazero.Runtime
	noSnapshots bool
	noMeter     bool
	metered     *meterCache // the bodies metered so far
	keep        *keepList   // nil: compile every function
	recorder    *callRecorder
	restored    atomic.Int64 // instances started from a snapshot
	wholes      atomic.Int64 // pruned modules compiled again in full
	cache       wazero.CompilationCache
	mu          sync.Mutex
	mods        map[[32]byte]*compileResult
	order       [][32]byte // insertion order, for eviction
}

type compileResult struct {
	done chan struct{}
	mod  *Module
	err  error
	// refs counts callers of Compile that have not released the module
	// yet; an evicted module is closed once none is left, so the compiled
	// code does not outlive its last judgement (wazero keeps a compiled
	// module until it is closed).
	refs    int
	evicted bool
}

// NewRuntime starts a runtime with the host imports installed.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	var rc wazero.RuntimeConfig
	if cfg.Interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
	} else {
		rc = wazero.NewRuntimeConfig()
	}
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: compilation cache: %w", err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	rc = rc.WithCompilationCache(cache).
		WithMemoryLimitPages(memoryLimitPages).
		WithCloseOnContextDone(true)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	_, err := rt.NewHostModuleBuilder(hostModuleName).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostCall),
		[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32},
		[]api.ValueType{api.ValueTypeI32}).Export("call").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostTake),
		[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32},
		[]api.ValueType{api.ValueTypeI32}).Export("take").
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	r := &Runtime{rt: rt, noSnapshots: cfg.NoSnapshots, noMeter: cfg.noMeter, metered: newMeterCache(), cache: cache, mods: map[[32]byte]*compileResult{}}
	if cfg.Keep != nil {
		r.keep = newKeepList(cfg.Keep)
	}
	if cfg.RecordCalls {
		r.recorder = &callRecorder{called: map[string]bool{}}
	}
	return r, nil
}

// WholeCompiles is how many pruned modules had to be compiled in full
// because an instance called a function compiled out of them.
func (r *Runtime) WholeCompiles() int64 { return r.wholes.Load() }

// CalledFunctions lists, sorted, the functions of the Go runtime that
// instances called (Config.RecordCalls).
func (r *Runtime) CalledFunctions() []string {
	if r.recorder == nil {
		return nil
	}
	r.recorder.mu.Lock()
	defer r.recorder.mu.Unlock()
	var names []string
	for name := range r.recorder.called {
		if prunable(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// SnapshotStarts is how many instances started from a snapshot of an
// earlier instance's start rather than by running `_initialize`.
func (r *Runtime) SnapshotStarts() int64 { return r.restored.Load() }

// Close releases everything the runtime holds.
func (r *Runtime) Close(ctx context.Context) error {
	err := r.rt.Close(ctx)
	r.cache.Close(ctx)
	return err
}

// Module is a compiled module, ready to instantiate any number of times.
type Module struct {
	cm     wazero.CompiledModule
	Hash   [32]byte
	entry  *compileResult
	snaps  *snapshots // nil: every instance runs `_initialize`
	Pruned int        // functions compiled as stubs (prune.go)
	whole  *wholeModule
	// emptySlots: the stubs are left out of the table (tableEdit), so a
	// call through one of their slots traps rather than reach the stub.
	emptySlots bool
	// names are the functions' names by index, to say where a call that
	// ran out of steps was (nil: the module has no name section).
	names map[int]string
}

// wholeModule is a pruned module's code in full, compiled when first
// needed.
type wholeModule struct {
	wasm  []byte // metered
	edits []*sectionEdit
	names moduleNames
	once  sync.Once
	mod   *Module
	err   error
}

// Compile compiles wasm, or returns the module compiled earlier from the
// same bytes. Concurrent calls for the same bytes compile once. Every
// module is metered (meter.go).
func (r *Runtime) Compile(ctx context.Context, wasm []byte) (*Module, bool, error) {
	h := sha256.Sum256(wasm)
	r.mu.Lock()
	if c, ok := r.mods[h]; ok {
		c.refs++
		r.touch(h) // least recently used goes first
		r.mu.Unlock()
		<-c.done
		if c.err != nil {
			return nil, true, c.err
		}
		return c.mod, true, nil
	}
	c := &compileResult{done: make(chan struct{}), refs: 1}
	r.mods[h] = c
	r.order = append(r.order, h)
	r.mu.Unlock()

	// wazero reads the worker count from the compile call's context; on
	// two cores two workers halve the time, more do not help.
	// The module is keyed by the bytes built, and compiled with its data
	// segments merged (wasmdata.go): the same memory at start, set up in
	// a few copies instead of thousands; and with its mutable globals
	// exported, so that an instance's start can be copied (snapshot.go).
	// Its name section serves pruning and recording; wazero gets none.
	// Each pass says what its section becomes; the module is written
	// once (rewrite.go).
	if !r.noMeter {
		var err error
		if wasm, err = meterModule(wasm, r.metered); err != nil {
			return r.failed(h, c, err)
		}
	}
	var edits []*sectionEdit
	var snaps *snapshots
	if start := memoryAtStart(wasm); start != nil {
		exports, globals := exportEdit(wasm)
		edits = append(edits, start.mergeEdit(), exports)
		if globals != nil && !r.noSnapshots {
			snaps = &snapshots{globals: globals, start: start}
		}
	}
	var whole *wholeModule
	pruned, emptySlots := 0, false
	names, ok := readNames(wasm)
	if ok {
		edits = append(edits, namesEdit(names))
		var e *sectionEdit
		var stub []bool
		if r.keep != nil {
			e, stub = pruneEdit(wasm, names, r.keep)
		}
		if e != nil {
			whole = &wholeModule{wasm: wasm, edits: slices.Clip(edits), names: names}
			table := tableEdit(wasm, names, stub)
			emptySlots = table != nil
			edits = append(edits, e, table)
			pruned = stubs(stub)
		}
	}
	code := rewrite(wasm, edits...)
	cctx := experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0))
	if r.recorder != nil && ok {
		cctx = experimental.WithFunctionListenerFactory(cctx, r.recorder.factory(names.byIndex))
	}
	cm, err := r.rt.CompileModule(cctx, code)
	if err == nil {
		err = checkImports(cm)
	}
	if err != nil {
		if cm != nil {
			cm.Close(context.Background())
		}
		return r.failed(h, c, err)
	}
	c.mod = &Module{cm: cm, Hash: h, entry: c, snaps: snaps, whole: whole, Pruned: pruned, emptySlots: emptySlots, names: names.byIndex}
	close(c.done)
	return c.mod, false, nil
}

// failed ends the compile c of the module hashed h with err, and forgets
// it, so that a later call may try again.
func (r *Runtime) failed(h [32]byte, c *compileResult, err error) (*Module, bool, error) {
	r.mu.Lock()
	if r.mods[h] == c {
		delete(r.mods, h)
		r.order = slices.DeleteFunc(r.order, func(x [32]byte) bool { return x == h })
	}
	r.mu.Unlock()
	c.err = err
	close(c.done)
	return nil, false, err
}

// Whole returns m compiled in full: m itself unless m was pruned. The
// caller runs on it what stopped with TrapPruned on m. It lives as long
// as m.
func (r *Runtime) Whole(ctx context.Context, m *Module) (*Module, error) {
	w := m.whole
	if w == nil {
		return m, nil
	}
	w.once.Do(func() {
		// Not the caller's deadline: the result serves every later caller.
		cctx := experimental.WithCompilationWorkers(context.WithoutCancel(ctx), runtime.GOMAXPROCS(0))
		cm, err := r.rt.CompileModule(cctx, rewrite(w.wasm, w.edits...))
		if err != nil {
			w.err = err
			return
		}
		w.mod = &Module{cm: cm, Hash: m.Hash, names: m.names}
		if m.snaps != nil {
			w.mod.snaps = &snapshots{globals: m.snaps.globals, start: m.snaps.start}
		}
		r.wholes.Add(1)
	})
	return w.mod, w.err
}

// touch moves h to the end of the eviction order; r.mu is held.
func (r *Runtime) touch(h [32]byte) {
	if i := slices.Index(r.order, h); i >= 0 {
		r.order = append(slices.Delete(r.order, i, i+1), h)
	}
}

// Release says the caller of Compile is done with m: it makes no more
// instances of it. Instances already made keep working.
func (r *Runtime) Release(m *Module) {
	if m == nil || m.entry == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m.entry.refs--
	r.closeIfUnused(m.entry)
	r.trim()
}

// trim evicts the least recently used modules nobody holds, beyond
// maxCachedModules of them; r.mu is held. A module in use is never
// evicted, so a second Compile of its bytes finds it.
func (r *Runtime) trim() {
	unused := 0
	for _, h := range r.order {
		if r.mods[h].refs <= 0 {
			unused++
		}
	}
	for i := 0; unused > maxCachedModules && i < len(r.order); {
		h := r.order[i]
		c := r.mods[h]
		if c.refs > 0 {
			i++
			continue
		}
		delete(r.mods, h)
		r.order = slices.Delete(r.order, i, i+1)
		c.evicted = true
		r.closeIfUnused(c)
		unused--
	}
}

// closeIfUnused closes an evicted module nobody holds; r.mu is held.
func (r *Runtime) closeIfUnused(c *compileResult) {
	if c.evicted && c.refs <= 0 && c.mod != nil {
		c.mod.cm.Close(context.Background())
		if w := c.mod.whole; w != nil && w.mod != nil {
			w.mod.cm.Close(context.Background())
		}
		c.mod = nil
	}
}

// checkImports refuses modules that import anything but WASI and our host.
func checkImports(cm wazero.CompiledModule) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != hostModuleName && mod != wasi_snapshot_preview1.ModuleName {
			return fmt.Errorf("sandbox: module imports %s.%s", mod, name)
		}
	}
	return nil
}

// Host answers a module's calls. An error from HandleCall stops the module
// at once; the instance's Call returns a *Trap with Kind TrapHost wrapping
// it.
type Host interface {
	HandleCall(op uint32, msg []byte) ([]byte, error)
}

// Limits bound one instance.
type Limits struct {
	// CallSteps bounds the work of each call into the module, start-up
	// included, in steps of the whole module (function entries and loop
	// headers, the runtime's and the library's too; see meter.go); 0
	// means no limit but the meter's own, maxGrant. Past it the call stops
	// with TrapFuel: the same code stops at the same step on any machine.
	CallSteps int64
	// Steps, if set, is a budget shared by every call of every instance
	// given it (a whole test, say), spent as steps are taken.
	Steps *StepBudget
	// CallTimeout bounds each call into the module in wall-clock time. It
	// is a safety net, not a verdict: how far a call gets in a given time
	// depends on how busy the machine is, so a caller should not hold a
	// TrapTimeout against the code.
	CallTimeout time.Duration
	// Output receives the module's stdout and stderr; the caller keeps
	// what it wants of it.
	Output io.Writer
	// MaxOutputBytes stops the module once it has written this much in
	// all (0: no limit), so an output flood ends instead of running on.
	MaxOutputBytes int64
	// Clock, if set, is the module's wall and monotonic clock (a virtual
	// one, say); otherwise wazero's fake clock, which ticks per reading.
	//
	// Reading it must not move it: instances started at the same reading
	// start alike (snapshot.go), so the Go runtime's start is copied from
	// the first of them rather than run again.
	Clock func() time.Time
	// Sleep, if set, is how the module's time passes when it waits (a
	// time.Sleep, a timer, a select with a timeout: the Go runtime, with
	// nothing to run, asks WASI to sleep until its next timer): the caller
	// moves Clock on by d, at once. Without it, the wait returns at once
	// and the clock moves only as it otherwise would: code that waits for
	// a clock that does not move spins until its step budget is spent.
	// Either way, no call ever waits in real time.
	Sleep func(d time.Duration)
	// Random is the key of the bytes random_get gives the module, from
	// which the Go runtime seeds, as it starts, all it draws at random:
	// its hash seeds and so map iteration order, which ready case a
	// select takes, math/rand's unseeded generator. Instances under the
	// same key read the same stream, byte for byte, and do the same;
	// under another key, a program whose result depends on map order
	// may do otherwise. 0 is the historical fixed stream, what every
	// instance read before the key existed. An instance started from a
	// snapshot starts from one taken under its own key (snapshot.go).
	Random uint64
}

// Instance is one live copy of a module. It is not safe for concurrent use.
type Instance struct {
	mod     api.Module
	host    Host
	limits  Limits
	pending []byte
	stderr  tailBuffer
	closed  bool
	steps   int64              // taken by the call under way
	fuel    api.MutableGlobal  // the meter's count of steps left
	granted int64              // what the call under way was given
	shared  bool               // the grant was cut to Limits.Steps
	names   map[int]string     // the module's functions, by index
	written int64              // bytes of output so far
	flooded bool               // MaxOutputBytes was passed
	oom     oomWatch           // reads stderr for the runtime's out-of-memory report
	cancel  context.CancelFunc // of the call under way
	rec     *initRecord        // watches `_initialize` for a snapshot
	stdout  io.Writer
	stderrW io.Writer
	// emptySlots is the module's: an invalid table access is a stub's
	// slot, called.
	emptySlots bool
}

type instanceKey struct{}

// Instantiate starts a fresh instance: its own memory, no state shared with
// any other.
func (m *Module) Instantiate(ctx context.Context, r *Runtime, h Host, lim Limits) (*Instance, error) {
	inst := &Instance{host: h, limits: lim, emptySlots: m.emptySlots}
	random := newRandomStream(lim.Random)
	inst.stderr.max = stderrTailBytes
	out := lim.Output
	if out == nil {
		out = io.Discard
	}
	counted := &outputMeter{inst: inst, w: out}
	inst.stdout = counted
	inst.oom.inst = inst
	// The watch reads each write before the meter counts it: a report
	// that itself passes the output limit still says what happened first.
	inst.stderrW = io.MultiWriter(&inst.oom, counted, &inst.stderr)
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous, so any number may live at once
		WithStdout(&initWatch{inst, false}).
		WithStderr(&initWatch{inst, true}).
		WithStdin(bytes.NewReader(nil)).
		WithRandSource(random).
		WithNanosleep(inst.sleep)
	// No WithFS, WithEnv, WithArgs, WithSysWalltime or WithSysNanotime:
	// no files, no environment, no host clock.
	var snap *snapshot
	if clock := lim.Clock; clock != nil {
		start := clock().UnixNano()
		if m.snaps != nil {
			var watch bool
			if snap, watch = m.snaps.lookup(ctx, lim.Random, start); snap != nil && !snap.fits(lim) {
				snap = nil // it would not have started: start it the old way
			} else if watch {
				inst.rec = &initRecord{clock: start, random: random, key: lim.Random}
				defer m.snaps.settle(lim.Random)
			}
		}
		read := func() int64 {
			t := clock().UnixNano()
			if inst.rec != nil && t != inst.rec.clock {
				inst.rec.unfit = true
			}
			return t
		}
		cfg = cfg.WithWalltime(func() (int64, int32) {
			if inst.rec != nil {
				inst.rec.wall = true
			}
			t := time.Unix(0, read())
			return t.Unix(), int32(t.Nanosecond())
		}, sys.ClockResolution(time.Millisecond)).
			// The monotonic clock counts from the instance's start, as a
			// process's does from some point of its own: what the Go
			// runtime reads of it while it starts is then the same in every
			// instance, and one snapshot serves them all.
			WithNanotime(func() int64 { return monotonicBase + read() - start }, sys.ClockResolution(time.Millisecond))
	}
	// `_initialize` is called once the meter's count is set, not as a
	// start function.
	cfg = cfg.WithStartFunctions()
	ctx, cancel := inst.callContext(ctx)
	defer cancel()
	ctx = experimental.WithMemoryAllocator(ctx, memoryAllocator(memoryLimitPages<<16))
	mod, err := r.rt.InstantiateModule(ctx, m.cm, cfg)
	if err != nil {
		return nil, inst.classify(ctx, err)
	}
	inst.mod = mod
	inst.names = m.names
	if fuel, ok := mod.ExportedGlobal(fuelExport).(api.MutableGlobal); ok {
		inst.fuel = fuel
	} else if !r.noMeter {
		inst.Close(context.Background())
		return nil, errors.New("sandbox: the module is not metered")
	}
	if snap != nil {
		random.skip(snap.random)
		if !snap.restore(m.snaps, inst, mod) {
			inst.Close(context.Background())
			return nil, errors.New("sandbox: an instance could not be started from its snapshot")
		}
		r.restored.Add(1)
		return inst, nil
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := inst.metered(ctx, init); err != nil {
			return nil, err
		}
	}
	if rec := inst.rec; rec != nil {
		inst.rec = nil
		m.snaps.keep(rec, inst, mod)
	}
	return inst, nil
}

// stream is where the module's stdout or stderr goes.
func (inst *Instance) stream(stderr bool) io.Writer {
	if stderr {
		return inst.stderrW
	}
	return inst.stdout
}

// initWatch is the module's stdout or stderr: while `_initialize` is
// watched, what it writes is kept to be written again by the instances
// started from its snapshot.
type initWatch struct {
	inst   *Instance
	stderr bool
}

func (w *initWatch) Write(p []byte) (int, error) {
	if rec := w.inst.rec; rec != nil {
		rec.write(w.stderr, p)
	}
	return w.inst.stream(w.stderr).Write(p)
}

// sleep is the module's WASI sleep: virtual time, never real.
func (inst *Instance) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	if inst.rec != nil {
		inst.rec.unfit = true // a start that waited is not copied
	}
	if inst.limits.Sleep != nil {
		inst.limits.Sleep(time.Duration(ns))
	}
}

// grant gives the meter the steps the next call may take: what is left
// of the call's budget and of the shared one.
func (inst *Instance) grant() {
	if inst.fuel == nil {
		return
	}
	g, shared := int64(maxGrant), false
	if max := inst.limits.CallSteps; max > 0 {
		g = min(g, max-inst.steps)
	}
	if b := inst.limits.Steps; b != nil && b.Max-b.used < g {
		g, shared = b.Max-b.used, true
	}
	g = max(g, 0)
	inst.granted, inst.shared = g, shared
	inst.fuel.Set(uint64(uint32(g)))
}

// settle counts the steps the call took against its budgets.
func (inst *Instance) settle() {
	if inst.fuel == nil {
		return
	}
	used := inst.granted - int64(uint32(inst.fuel.Get()))
	inst.granted = 0
	inst.steps += used
	if b := inst.limits.Steps; b != nil {
		b.used += used
	}
}

func (inst *Instance) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	inst.steps = 0
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	if inst.limits.CallTimeout > 0 {
		ctx, inst.cancel = context.WithTimeout(ctx, inst.limits.CallTimeout)
	} else {
		ctx, inst.cancel = context.WithCancel(ctx)
	}
	return ctx, inst.cancel
}

// errFlooded is a call that wrote past its output limit and returned
// before the meter could stop it.
var errFlooded = errors.New("sandbox: the output limit was passed")

// stop ends the call under way at its next step, the same step on every
// run: the meter is left nothing (what was left no longer counts as
// granted), so its next step traps. An unmetered module's call is
// cancelled instead, which stops it when wazero next looks.
func (inst *Instance) stop() {
	if inst.fuel == nil {
		if inst.cancel != nil {
			inst.cancel()
		}
		return
	}
	inst.granted -= int64(uint32(inst.fuel.Get()))
	inst.fuel.Set(0)
}

// outputMeter counts a module's output and stops the module, by cancelling
// its call, once it passes the limit.
type outputMeter struct {
	inst *Instance
	w    io.Writer
}

func (m *outputMeter) Write(p []byte) (int, error) {
	inst := m.inst
	inst.written += int64(len(p))
	if max := inst.limits.MaxOutputBytes; max > 0 && inst.written > max {
		if !inst.flooded {
			inst.flooded = true
			inst.stop()
		}
		return len(p), nil
	}
	// The module is told all was written, whatever the caller's writer
	// says: what it sees must not depend on where its output goes.
	m.w.Write(p)
	return len(p), nil
}

// Call calls an exported function taking no parameters and returns its
// results. On any failure the instance is closed and discarded, since a Go
// module that panicked or ran out of memory cannot be used again.
func (inst *Instance) Call(ctx context.Context, name string) ([]uint64, error) {
	if inst.closed {
		return nil, errors.New("sandbox: call on a closed instance")
	}
	fn := inst.mod.ExportedFunction(name)
	if fn == nil {
		inst.Close(ctx)
		return nil, &Trap{Kind: TrapProtocol, Message: "the module does not export " + name}
	}
	ctx, cancel := inst.callContext(ctx)
	defer cancel()
	return inst.metered(ctx, fn)
}

// metered calls fn with the meter set to the call's budget, counts the
// steps it took, and on any failure closes the instance and says why.
func (inst *Instance) metered(ctx context.Context, fn api.Function) ([]uint64, error) {
	inst.grant()
	res, err := fn.Call(ctx)
	inst.settle()
	if err == nil && inst.flooded {
		err = errFlooded // it ended before its next step
	}
	if err != nil {
		err = inst.classify(ctx, err)
		inst.Close(context.Background())
		return nil, err
	}
	return res, nil
}

// Close discards the instance.
func (inst *Instance) Close(ctx context.Context) {
	if inst.closed {
		return
	}
	inst.closed = true
	if inst.mod != nil {
		inst.mod.Close(ctx)
	}
}

// StepBudget is a number of steps shared by many calls and instances. It
// is not safe for concurrent use.
type StepBudget struct {
	Max  int64 // steps allowed in all
	used int64
}

// Used is how many steps have been taken against the budget, up to the
// last call that ended.
func (b *StepBudget) Used() int64 { return b.used }

// monotonicBase is where an instance's monotonic clock starts.
const monotonicBase = int64(time.Hour)

// randomStream is what random_get gives a module: ChaCha8 under a key
// drawn from Limits.Random, the same stream in every instance under the
// same key, so map order, hash seeds, select and math/rand repeat from run
// to run of a key and may differ from one key to another. The Go runtime
// seeds its random state from it, not from the clock (as it would from
// all-zero bytes), so its start does not depend on when the instance
// starts.
type randomStream struct {
	r    *rand.ChaCha8
	read int64 // bytes given so far
}

// randomSeed is the ChaCha8 key of Limits.Random 0, the stream every
// instance read before there were keys: any fixed value did.
var randomSeed = [32]byte([]byte("the same random bytes everywhere"))

// chachaKey is the ChaCha8 key of a Limits.Random: randomSeed for 0, so
// that callers who leave it unset see what they always saw; for any other,
// a hash of it, so that nearby keys give unrelated streams.
func chachaKey(key uint64) [32]byte {
	if key == 0 {
		return randomSeed
	}
	b := append([]byte("ctrljudge random_get key "), strconv.FormatUint(key, 10)...)
	return sha256.Sum256(b)
}

func newRandomStream(key uint64) *randomStream {
	return &randomStream{r: rand.NewChaCha8(chachaKey(key))}
}

func (s *randomStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.read += int64(n)
	return n, err
}

// skip moves the stream past n bytes, where an instance started from a
// snapshot takes over from the `_initialize` that made it.
func (s *randomStream) skip(n int64) {
	var buf [64]byte
	for n > 0 {
		k, _ := s.Read(buf[:min(n, int64(len(buf)))])
		n -= int64(k)
	}
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.ToValidUTF8(string(t.b), "\uFFFD") }
