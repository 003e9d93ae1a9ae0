package judge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// EngineVersion is recorded with every verdict; bump it when a change can
// alter verdicts, and say what changed in ENGINES.md.
const EngineVersion = "ctrljudge-20"

// DefaultSeed is used when a submission names none.
const DefaultSeed uint64 = 1

const (
	maxCachedBuilds   = 64
	maxCachedVerdicts = 256
)

// Options configure an Engine.
type Options struct {
	// CacheDir keeps built and compiled modules across runs ("" keeps them
	// in memory). It must be private to the judge.
	CacheDir string
	// Compiler runs modules compiled to machine code by wazero's
	// optimizing compiler instead of its interpreter. The interpreter is
	// the default: a learner's module is new code that runs for well under
	// a second, and compiling it costs more than interpreting it saves
	// (RATIONALE.md, "Why an interpreter, not a compiler?").
	Compiler bool
	// Progress, if set, hears of slow one-time preparation: the first use
	// of a Go version compiles its standard library for WebAssembly.
	Progress io.Writer
	// noSnapshots starts every controller by running its module's
	// initialisation (sandbox.Config.NoSnapshots): the tests compare.
	noSnapshots bool
	// keep, if not nil, replaces keptFunctions; noPruning compiles
	// every function; recordCalls records the library functions called
	// (sandbox.Config): the tests compare, and make keptFunctions.
	keep        []string
	noPruning   bool
	recordCalls bool
}

// Submission is one piece of learner code to judge.
type Submission struct {
	Exercise *exercise.Exercise
	Code     []byte
	FileName string // shown in diagnostics; never used as a path
	Mode     verdict.Mode
	Seed     uint64 // 0 means DefaultSeed
	// Only, if set, runs just the test with this name.
	Only string
	// SetFaults replaces every test's planned faults with Faults: how a
	// shrunk failure is replayed.
	SetFaults bool
	Faults    []verdict.Fault
	// Scenario, if set, is one test in tests.yaml syntax to run instead
	// of the exercise's (a shrunk generated scenario, printed in a
	// verdict and replayed with judge test --scenario).
	Scenario []byte
	// Progress, if set, is called as judging advances, from the judging
	// goroutine.
	Progress func(verdict.Event)
}

// Engine compiles and judges submissions. It is safe for concurrent use.
type Engine struct {
	builder   *sandbox.Builder
	rt        *sandbox.Runtime
	cacheDir  string
	progress  io.Writer // Options.Progress
	noStdWarm bool      // tests: leave the standard library to the learner's build
	goVer     string

	warmMu sync.Mutex
	warmed bool

	mu        sync.Mutex
	generated map[generatedKey][]*exercise.Test // generatedTests' scenarios, the same for every submission at a seed
	builds    *lru[[]byte]
	verdicts  *lru[*verdict.Verdict]
	inflight  map[string]*buildCall

	// The differential oracle's: each exercise's solution, built, and the
	// observations of its runs (see differential.go).
	solutions map[string][]byte
	refs      *lru[*observation]
	refCalls  map[string]*refCall
}

type buildCall struct {
	done chan struct{}
	wasm []byte
	err  error
}

// NewEngine finds the Go toolchain and starts the WebAssembly runtime.
func NewEngine(opts Options) (*Engine, error) {
	b, err := sandbox.NewBuilder()
	if err != nil {
		return nil, err
	}
	goVer, err := b.GoVersion()
	if err != nil {
		return nil, fmt.Errorf("go version: %w", err)
	}
	cfg := sandbox.Config{Interpreter: !opts.Compiler, NoSnapshots: opts.noSnapshots, RecordCalls: opts.recordCalls}
	switch {
	case opts.keep != nil:
		cfg.Keep = opts.keep
	case !opts.noPruning && !opts.recordCalls:
		cfg.Keep = keptFunctionList()
	}
	if opts.CacheDir != "" {
		b.StateDir = filepath.Join(opts.CacheDir, "toolchain")
		cfg.CacheDir = filepath.Join(opts.CacheDir, "wazero")
		if err := os.MkdirAll(filepath.Join(opts.CacheDir, "wasm"), 0o700); err != nil {
			return nil, err
		}
	}
	rt, err := sandbox.NewRuntime(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &Engine{builder: b, rt: rt, cacheDir: opts.CacheDir, goVer: goVer, progress: opts.Progress,
		builds: newLRU[[]byte](maxCachedBuilds), verdicts: newLRU[*verdict.Verdict](maxCachedVerdicts),
		inflight: map[string]*buildCall{}, generated: map[generatedKey][]*exercise.Test{},
		solutions: map[string][]byte{}, refs: newLRU[*observation](maxCachedReferences), refCalls: map[string]*refCall{}}, nil
}

// Close releases the engine's runtime.
func (e *Engine) Close() error { return e.rt.Close(context.Background()) }

// GoVersion is the toolchain that builds learner code.
func (e *Engine) GoVersion() string { return e.goVer }

// Linker names the linker learners' builds run (sandbox.Builder.Linker).
func (e *Engine) Linker() string { return e.builder.Linker() }

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// warmUp is a trivial controller: the program whose trusted files (the
// SDK, the glue) Warm prepares once, so that a cold Go build cache (the
// wasip1 standard library, about 10 s) never counts against a learner's
// build time.
const warmUp = `package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
`

// Warm prepares the toolchain; Judge calls it before its first build, a
// server may call it at start.
// A failed warm-up (a cancelled request, say) is tried again next time.
func (e *Engine) Warm(ctx context.Context) error {
	e.warmMu.Lock()
	defer e.warmMu.Unlock()
	if e.warmed {
		return nil
	}
	// The standard library first (its progress line on a cold cache), then
	// what every learner's build links: the SDK and its imports, compiled
	// once per Go version and SDK, and kept in CacheDir for later runs.
	err := e.warmStd(ctx)
	if err == nil {
		err = e.builder.Prepare(ctx, program([]byte(warmUp), "warmup.go"))
	}
	e.warmed = err == nil
	return err
}

// warmStd compiles the whole wasip1 standard library once per Go version
// and build cache, so that no learner's first import "fmt" pays for it. A
// stamp in the user's cache folder spares later processes the second or
// so that even a warm check costs; should the Go cache have been emptied
// since, a learner's build compiles what it imports, which its limits
// allow for.
func (e *Engine) warmStd(ctx context.Context) error {
	if e.noStdWarm {
		return nil
	}
	stamp := ""
	if dir, err := os.UserCacheDir(); err == nil {
		stamp = filepath.Join(dir, "ctrljudge", "std-"+hashOf(e.goVer, os.Getenv("GOCACHE"))[:16])
		if _, err := os.Stat(stamp); err == nil {
			return nil
		}
	}
	if err := e.builder.WarmStd(ctx, e.progress); err != nil {
		return err
	}
	if stamp != "" && os.MkdirAll(filepath.Dir(stamp), 0o700) == nil {
		os.WriteFile(stamp, []byte(e.goVer+"\n"), 0o600)
	}
	return nil
}

// build compiles code to wasm once per content (and SDK: sdkDigest): concurrent and repeated
// requests share the result, in memory and in CacheDir.
func (e *Engine) build(ctx context.Context, code []byte, fileName string) ([]byte, bool, error) {
	if err := e.Warm(ctx); err != nil {
		return nil, false, fmt.Errorf("warming the Go toolchain: %w", err)
	}
	key := hashOf(EngineVersion, e.goVer, sdkDigest(), string(code), fileName)
	e.mu.Lock()
	if w, ok := e.builds.Get(key); ok {
		e.mu.Unlock()
		return w, true, nil
	}
	if c, ok := e.inflight[key]; ok {
		e.mu.Unlock()
		<-c.done
		return c.wasm, true, c.err
	}
	c := &buildCall{done: make(chan struct{})}
	e.inflight[key] = c
	e.mu.Unlock()

	var diskPath string
	if e.cacheDir != "" {
		diskPath = filepath.Join(e.cacheDir, "wasm", key+".wasm") // our hash, never the learner's name
		if w, err := os.ReadFile(diskPath); err == nil {
			c.wasm = w
		}
	}
	cached := c.wasm != nil
	if !cached {
		c.wasm, c.err = e.builder.Build(ctx, program(code, fileName))
		if c.err == nil && diskPath != "" {
			tmp := diskPath + ".tmp" + strconv.Itoa(os.Getpid())
			if os.WriteFile(tmp, c.wasm, 0o600) == nil {
				os.Rename(tmp, diskPath)
			}
		}
	}
	e.mu.Lock()
	delete(e.inflight, key)
	if c.err == nil {
		e.builds.put(key, c.wasm)
	}
	e.mu.Unlock()
	close(c.done)
	return c.wasm, cached, c.err
}

// Judge judges one submission. It always returns a verdict in a named
// terminal state; a failure of the judge itself is OutcomeInternalError.
func (e *Engine) Judge(ctx context.Context, s Submission) *verdict.Verdict {
	start := time.Now()
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	if s.Mode == "" {
		s.Mode = verdict.ModeSubmit
	}
	if s.FileName == "" {
		s.FileName = s.Exercise.FileName()
	}
	progress := s.Progress
	if progress == nil {
		progress = func(verdict.Event) {}
	}
	v := &verdict.Verdict{Version: 3, Exercise: s.Exercise.Slug, ExerciseVersion: s.Exercise.Version,
		Engine: EngineVersion, Mode: s.Mode, Seed: s.Seed, Tests: []verdict.TestResult{}}

	faultKey := "planned"
	if s.SetFaults {
		faultKey = "set:" + text.JoinNames(s.Faults, ",")
		for _, f := range s.Faults {
			if !slices.Contains(verdict.Faults, f) {
				return e.internal(v, "no fault class "+strconv.Quote(string(f))+" (known: "+text.JoinNames(verdict.Faults, ", ")+")", progress)
			}
		}
	}
	vkey := hashOf(EngineVersion, e.goVer, s.Exercise.Version, string(s.Mode), strconv.FormatUint(s.Seed, 10), s.Only, faultKey, s.FileName, string(s.Code), string(s.Scenario))
	e.mu.Lock()
	cachedV, ok := e.verdicts.Get(vkey)
	e.mu.Unlock()
	if ok {
		out := *cachedV
		out.Timings = verdict.Timings{TotalMs: time.Since(start).Milliseconds(), Cached: true}
		for i := range out.Tests {
			progress(verdict.Event{Phase: verdict.PhaseTest, Index: i + 1, Total: len(out.Tests), Name: out.Tests[i].Name, Test: &out.Tests[i]})
		}
		progress(verdict.Event{Phase: verdict.PhaseDone})
		return &out
	}

	progress(verdict.Event{Phase: verdict.PhaseCompiling})
	wasm, buildCached, err := e.build(ctx, s.Code, s.FileName)
	v.Timings.BuildMs = time.Since(start).Milliseconds()
	var be *sandbox.BuildError
	var busy *sandbox.BusyError
	switch {
	case errors.As(err, &busy) || err != nil && ctx.Err() != nil:
		// The clock or the caller stopped the build, not the code.
		return notJudged(v, progress)
	case errors.As(err, &be):
		v.Status, v.Outcome = verdict.StatusError, verdict.OutcomeCompileError
		v.Diagnostics = learnerDiagnostics(be.Diagnostics, s.FileName)
		v.Message = be.Message
		if v.Message == "" {
			v.Message = "Your code did not compile."
		}
		boundVerdict(v)
		e.remember(vkey, v)
		progress(verdict.Event{Phase: verdict.PhaseDone})
		return v
	case err != nil:
		return e.internal(v, "building the module: "+err.Error(), progress)
	}
	t0 := time.Now()
	mod, _, err := e.rt.Compile(ctx, wasm)
	v.Timings.CompileMs = time.Since(t0).Milliseconds()
	if err != nil {
		return e.internal(v, "compiling the module: "+err.Error(), progress)
	}
	defer e.rt.Release(mod) // every instance of it is made before Judge returns
	v.Timings.Cached = buildCached

	var tests []*exercise.Test
	if s.Scenario != nil {
		t, err := exercise.ParseScenario("the scenario", s.Scenario, Checks)
		if err != nil {
			return e.internal(v, err.Error(), progress)
		}
		tests = append(tests, t)
	} else {
		for _, t := range s.Exercise.Suite.Tests {
			if (s.Mode == verdict.ModeSubmit || t.Sample) && (s.Only == "" || t.Name == s.Only) {
				tests = append(tests, t)
			}
		}
		if s.Mode == verdict.ModeSubmit || s.Exercise.IsGeneratedTest(s.Only) {
			// Generated scenarios run in submit mode, or one alone when
			// named (a replay): a run shows the named samples, which a
			// learner can read in tests.yaml.
			tests = append(tests, e.generatedTests(s.Exercise.Suite, s.Seed, s.Only)...)
		}
	}
	if s.SetFaults {
		for i, t := range tests {
			tc := *t
			tc.Faults = s.Faults
			tests[i] = &tc
		}
	}
	if len(tests) == 0 {
		return e.internal(v, "no test named "+strconv.Quote(s.Only), progress)
	}
	t1 := time.Now()
	rctx, cancel := context.WithTimeout(ctx, MaxJudgeTime)
	rctx = withDifferential(rctx, diffContext{ref: &referee{e: e, ex: s.Exercise, self: bytes.Equal(s.Code, s.Exercise.Solution)}})
	v.Tests = e.runTests(rctx, mod, s, tests, progress)
	cancel()
	v.Timings.RunMs = time.Since(t1).Milliseconds()
	if ctx.Err() != nil || slices.ContainsFunc(v.Tests, func(t verdict.TestResult) bool { return t.Oracle == verdict.OracleNotJudged }) {
		return notJudged(v, progress)
	}
	v.Status, v.Outcome = verdict.StatusPass, verdict.OutcomeAccepted
	for _, t := range v.Tests {
		if t.Status == verdict.StatusPass {
			v.Passed++
			continue
		}
		v.Failed++
		if v.Status == verdict.StatusPass {
			v.Status, v.Outcome = verdict.StatusFail, t.Oracle.Outcome()
		}
	}
	v.Timings.TotalMs = time.Since(start).Milliseconds()
	boundVerdict(v)
	e.remember(vkey, v)
	progress(verdict.Event{Phase: verdict.PhaseDone})
	return v
}

// remember caches a verdict that the code and the seed decided.
func (e *Engine) remember(key string, v *verdict.Verdict) {
	if v.Outcome == verdict.OutcomeInternalError || v.Outcome == verdict.OutcomeNotJudged {
		return
	}
	e.mu.Lock()
	e.verdicts.put(key, v)
	e.mu.Unlock()
}

// notJudged ends a submission that a wall-clock safety net stopped (or
// whose judging was called off): nothing in it says anything about the
// code, so it carries no tests, is never cached and never charged.
func notJudged(v *verdict.Verdict, progress func(verdict.Event)) *verdict.Verdict {
	v.Status, v.Outcome = verdict.StatusError, verdict.OutcomeNotJudged
	v.Message = "The judge was too busy to finish this attempt in time. It was not counted; it will be judged again."
	v.Tests, v.Passed, v.Failed = []verdict.TestResult{}, 0, 0
	progress(verdict.Event{Phase: verdict.PhaseDone})
	return v
}

func (e *Engine) internal(v *verdict.Verdict, msg string, progress func(verdict.Event)) *verdict.Verdict {
	v.Status, v.Outcome, v.Message = verdict.StatusError, verdict.OutcomeInternalError, "The judge failed: "+msg
	progress(verdict.Event{Phase: verdict.PhaseDone})
	return v
}

// generatedKey names a submission's generated scenarios: a suite's, at a
// seed, all or the one named.
type generatedKey struct {
	suite *exercise.Suite
	seed  uint64
	only  string
}

// maxCachedGenerated bounds the scenario sets an engine keeps; past it
// they are dropped and made again.
const maxCachedGenerated = 256

// generatedTests returns generatedTests(suite, seed, only), made once:
// making them renders and parses each scenario's manifests, and tests
// are only read while they run, by any number of judgements at once.
func (e *Engine) generatedTests(suite *exercise.Suite, seed uint64, only string) []*exercise.Test {
	k := generatedKey{suite, seed, only}
	e.mu.Lock()
	tests, ok := e.generated[k]
	e.mu.Unlock()
	if ok {
		return tests
	}
	tests = generatedTests(suite, seed, only)
	e.mu.Lock()
	if len(e.generated) >= maxCachedGenerated {
		clear(e.generated)
	}
	e.generated[k] = tests
	e.mu.Unlock()
	return tests
}

// lru is a small least-recently-used map; callers lock.
type lru[V any] struct {
	max   int
	order []string
	m     map[string]V
}

func newLRU[V any](max int) *lru[V] { return &lru[V]{max: max, m: map[string]V{}} }

func (l *lru[V]) Get(k string) (V, bool) {
	v, ok := l.m[k]
	if ok {
		l.touch(k)
	}
	return v, ok
}

func (l *lru[V]) touch(k string) {
	for i, x := range l.order {
		if x == k {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	l.order = append(l.order, k)
}

func (l *lru[V]) put(k string, v V) {
	l.m[k] = v
	l.touch(k)
	for len(l.order) > l.max {
		delete(l.m, l.order[0])
		l.order = l.order[1:]
	}
}
