package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What one learner's build may use. The kernel enforces the first three
// on every process of the build (go, compile, link). They are a net, like
// the wall clock: how much memory a compiler holds when it is stopped
// depends on when its collector ran, so a build they end is a BusyError,
// never the program's verdict. What decides a build is checked on the
// source first (limits.go). Figures: RATIONALE.md, "Why kernel limits,
// and only as a net?".
const (
	// maxBuildCPU is RLIMIT_CPU per process: a warm build of a learner's
	// file takes under 2 s of CPU, the largest cold standard-library
	// package a few seconds; a compile bomb never stops.
	maxBuildCPU = 60 * time.Second
	// maxBuildMemoryBytes is RLIMIT_DATA (heap and other private writable
	// memory) per process: a normal build needs ~200 MB; a generic
	// instantiation bomb reaches 2 GiB in ~30 s.
	maxBuildMemoryBytes = 2 << 30
	// maxBuildFileBytes is RLIMIT_FSIZE per file written: the largest
	// object of the standard library is ~13 MB, while a sparse array
	// literal or a doubled string constant writes gigabytes into the
	// shared build cache.
	maxBuildFileBytes = 64 << 20
	// maxBuildWall is only a net against a starved or stuck build: when
	// it fires the build is not judged (BusyError), never failed.
	maxBuildWall = 4 * time.Minute
	// maxWarmWall bounds trusted builds (Warm, WarmStd), which compile the
	// standard library on a cold cache.
	maxWarmWall = 20 * time.Minute
	// buildWaitDelay is how long Wait waits for the output pipes after the
	// group was killed, should anything still hold them.
	buildWaitDelay = 5 * time.Second

	// maxLinkHeapBytes is where a link's collector starts (linkGCEnv):
	// eight times a learner's link, a quarter of maxBuildMemoryBytes.
	maxLinkHeapBytes = 512 << 20

	maxModuleBytes = 16 << 20
	maxStderrBytes = 1 << 20
)

// MaxSourceBytes is the largest learner file a build takes; the web
// server refuses bigger code before it reaches the judge.
const MaxSourceBytes = 64 << 10

// BuildLimits bound one build. Zero fields are unbounded.
type BuildLimits struct {
	// CPU is the CPU time each process of the build may use, enforced by
	// the kernel (RLIMIT_CPU, then SIGKILL).
	CPU time.Duration
	// MemoryBytes is each process's data memory (RLIMIT_DATA).
	MemoryBytes int64
	// FileBytes is the size of any file a process writes (RLIMIT_FSIZE).
	// A build any of these three ends is a *BusyError: a net, like Wall.
	FileBytes int64
	// Wall is the real-time net. When it (or the caller's deadline) ends
	// a build first, the result is a *BusyError: the machine was slow,
	// the program is not at fault.
	Wall time.Duration
}

// DefaultBuildLimits are the limits of a learner's build.
func DefaultBuildLimits() BuildLimits {
	return BuildLimits{CPU: maxBuildCPU, MemoryBytes: maxBuildMemoryBytes, FileBytes: maxBuildFileBytes, Wall: maxBuildWall}
}

// trustedLimits bound builds of our own code: only the wall-clock net.
var trustedLimits = BuildLimits{Wall: maxWarmWall}

// Program is a Go module to build: trusted support files plus one
// untrusted file, the learner's.
type Program struct {
	// Files are the trusted files by slash path inside the module
	// (go.mod, glue, libraries). Paths are ours, never the learner's.
	Files map[string][]byte
	// Main is the untrusted source, placed at MainPath.
	Main     []byte
	MainPath string
	// MainName is how diagnostics name the untrusted file.
	MainName string
	// Package is the package to build, e.g. "./solution". When MainPath
	// is in it, Main must be package main.
	Package string
	// Allowed lists the non-standard import paths Main may use.
	Allowed []string
}

// Diagnostic is one compiler message.
type Diagnostic struct {
	File    string // MainName for the untrusted file, else the module path
	Line    int
	Column  int
	Message string
}

func (d Diagnostic) String() string {
	s := d.File + ":" + strconv.Itoa(d.Line)
	if d.Column > 0 {
		s += ":" + strconv.Itoa(d.Column)
	}
	return s + ": " + d.Message
}

// BuildError is a build that failed because of the program: a compile or
// link error, a refused import or directive, a source too large or past a
// limit checked on the source (limits.go). Judge it compile_error;
// the same source always fails the same way, so it may be cached.
type BuildError struct {
	Diagnostics []Diagnostic
	Message     string // when no diagnostic applies

	syntax bool // go/parser rejected the file
}

func (e *BuildError) Error() string {
	if len(e.Diagnostics) == 0 {
		return e.Message
	}
	var b strings.Builder
	for i, d := range e.Diagnostics {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// BusyError is a build that a net stopped, not the program's own limits:
// the wall clock or the caller's deadline (the machine was busy, or the
// build waited too long for its turn), or a kernel limit on CPU, memory
// or file size that the checks on the source did not foresee, where
// whether it fires depends on the compiler's collector and so on the
// load. Judge it not_judged: never cache it, never charge it, try again
// later. It wraps context.DeadlineExceeded.
type BusyError struct {
	Wall  time.Duration // real time spent, waiting included
	Limit string        // the kernel limit that fired, or "" for the clock
}

func (e *BusyError) Error() string {
	if e.Limit != "" {
		return fmt.Sprintf("the build was stopped by the judge's safety net after %v: it needed more than %s, which the checks on the source did not foresee (not a verdict on the program)", e.Wall.Round(time.Second), e.Limit)
	}
	return fmt.Sprintf("the build was stopped after %v of real time, before it finished: the machine is too busy (not a fault of the program)", e.Wall.Round(time.Second))
}

func (e *BusyError) Unwrap() error { return context.DeadlineExceeded }

// Builder runs the Go toolchain. Its zero value is not usable; see NewBuilder.
type Builder struct {
	// Limits bound each learner's build (Build); NewBuilder sets
	// DefaultBuildLimits. Trusted builds (Warm, WarmStd) have none but a
	// generous wall-clock net. Set before the first build.
	Limits BuildLimits
	// MaxConcurrent is how many builds (Build, Warm) may run at once;
	// others wait their turn, as long as their context allows. Zero means
	// GOMAXPROCS. Set before the first build.
	MaxConcurrent int

	// StateDir keeps what Prepare compiled (an import configuration per
	// Go toolchain and set of trusted files) for later processes; "" keeps
	// it in memory. Set before the first build.
	StateDir string

	goBin      string
	env        []string
	toolDir    string                     // the compiler and linker; "" builds with the go command
	linkProcs  string                     // the linker's GOMAXPROCS; "" leaves it to the runtime
	compileEnv []string                   // added to the compiler's environment (compileGCEnv)
	linkEnv    func(BuildLimits) []string // added to the linker's (linkGCEnv); nil adds nothing
	goVersion  string                     // "go1.26.8"
	goroot     string
	gocache    string
	version    string // go version's line
	semOnce    sync.Once
	sem        chan struct{}

	kitMu sync.Mutex
	kits  map[string]*kit

	// noSourceLimits lets tests reach the kernel's limits with a bomb.
	noSourceLimits bool
}

// NewBuilder finds the installed Go toolchain and its build cache.
func NewBuilder() (*Builder, error) {
	go sweepTemp() // what killed processes left behind (tempdir.go)
	goBin, err := exec.LookPath("go")
	if err != nil {
		if _, err2 := os.Stat("/usr/local/go/bin/go"); err2 == nil {
			goBin = "/usr/local/go/bin/go"
		} else {
			return nil, fmt.Errorf("the Go toolchain is not installed or not on PATH: %w", err)
		}
	}
	// One go env answers what go version would (its line is rebuilt from
	// GOVERSION, GOHOSTOS and GOHOSTARCH): a process start less per CLI run.
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOROOT", "GOTOOLDIR", "GOVERSION", "GOHOSTOS", "GOHOSTARCH").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6 {
		return nil, errors.New("go env: unexpected output")
	}
	env := []string{
		"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0",
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off",
		"GOENV=off", "GOSUMDB=off",
		"GOCACHE=" + lines[0], "GOROOT=" + lines[1],
		"PATH=" + filepath.Dir(goBin),
	}
	// The linker on one P, as the compiler: a link that collects has no
	// idle P to mark on, so the CPU it takes does not depend on whether
	// the other cores are busy (RATIONALE.md, "Why the linker without its
	// collector, on one P?").
	return &Builder{goBin: goBin, env: env, Limits: DefaultBuildLimits(), linkProcs: "1", compileEnv: compileGCEnv, linkEnv: linkGCEnv,
		goroot: lines[1], gocache: lines[0], toolDir: lines[2], goVersion: lines[3],
		version: "go version " + lines[3] + " " + lines[4] + "/" + lines[5]}, nil
}

// GoVersion returns the toolchain's version line, as go version prints it.
func (b *Builder) GoVersion() (string, error) {
	if b.version != "" {
		return b.version, nil
	}
	out, err := exec.Command(b.goBin, "version").Output()
	return strings.TrimSpace(string(out)), err
}

// buildFlags are the flags of every build, learner's or warm-up: the
// standard library warmed by WarmStd is cached under the same action IDs
// that a learner's build looks up. (-buildmode=c-shared adds no compiler
// flag for wasip1, only a link mode.)
var buildFlags = []string{"-trimpath"}

// Warm builds a trusted program with a generous deadline and no kernel
// limits, so the build cache holds what it needs before any untrusted
// build is bounded.
func (b *Builder) Warm(ctx context.Context, p Program) error {
	_, err := b.build(ctx, p, trustedLimits)
	return err
}

// WarmStd compiles the whole standard library for wasip1 into the build
// cache, with the flags learners' builds use, so that a learner's first
// import "fmt" or "encoding/json" costs what it costs on a warm machine.
// It has no kernel limits, a 20-minute net, and does not wait for a
// build slot. On a warm cache it takes about a second and writes nothing
// to progress; otherwise it writes a line when it starts compiling and
// one when it is done. progress may be nil.
func (b *Builder) WarmStd(ctx context.Context, progress io.Writer) error {
	tmp, err := tempDir("", "std")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pw := &stdProgress{w: progress, start: time.Now()}
	args := append(append([]string{"build"}, buildFlags...), "-v", "std")
	r := b.run(ctx, tmp, tmp, args, trustedLimits, pw)
	if r.err == nil {
		pw.done(r.cpu)
		return nil
	}
	var busy *BusyError
	if errors.As(r.err, &busy) || ctx.Err() != nil {
		return r.err
	}
	return fmt.Errorf("sandbox: building the standard library for wasip1: %v: %s", r.err, firstLines(strings.ReplaceAll(r.stderr, tmp, "."), 20))
}

// stdProgress watches go build -v, which names each package it compiles
// (and none it finds in the cache).
type stdProgress struct {
	w       io.Writer
	start   time.Time
	partial []byte
	n       int
}

func (s *stdProgress) Write(b []byte) (int, error) {
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		line := string(s.partial[:i])
		s.partial = s.partial[i+1:]
		if line != "" && !strings.ContainsAny(line, " :") {
			s.n++
			if s.n == 1 && s.w != nil {
				fmt.Fprintln(s.w, "Compiling the Go standard library for WebAssembly (once per Go version; a minute or two)…")
			}
		}
	}
	return len(b), nil
}

func (s *stdProgress) done(cpu time.Duration) {
	if s.n > 0 && s.w != nil {
		fmt.Fprintf(s.w, "Compiled %d packages of the standard library in %v (%v of CPU).\n", s.n, time.Since(s.start).Round(100*time.Millisecond), cpu.Round(100*time.Millisecond))
	}
}

// Build compiles p to a wasm reactor module under b.Limits, waiting for a
// build slot first. A problem with the program is a *BuildError; a build
// the machine was too busy to finish is a *BusyError; a cancelled ctx is
// ctx's error; any other error is the host's.
func (b *Builder) Build(ctx context.Context, p Program) ([]byte, error) {
	r, err := b.build(ctx, p, b.Limits)
	return r.wasm, err
}

// buildResult is a build's module and what it cost.
type buildResult struct {
	wasm   []byte
	cpu    time.Duration // user+system time of the go command and its waited-for children
	maxRSS int64         // peak resident memory of the largest process
	wall   time.Duration
}

func (b *Builder) acquire(ctx context.Context) (release func(), err error) {
	b.semOnce.Do(func() {
		n := b.MaxConcurrent
		if n <= 0 {
			n = runtime.GOMAXPROCS(0)
		}
		b.sem = make(chan struct{}, n)
	})
	select {
	case b.sem <- struct{}{}:
		return func() { <-b.sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *Builder) build(ctx context.Context, p Program, lim BuildLimits) (buildResult, error) {
	return b.buildIn(ctx, p, lim, "")
}

// buildIn builds in a temporary folder under root (the system's when "").
func (b *Builder) buildIn(ctx context.Context, p Program, lim BuildLimits, root string) (buildResult, error) {
	start := time.Now()
	if len(p.Main) > MaxSourceBytes {
		return buildResult{}, &BuildError{Message: fmt.Sprintf("%s is %d KiB; the limit is %d KiB", p.MainName, len(p.Main)>>10, MaxSourceBytes>>10)}
	}
	vetErr := vetSource(p)
	var syntax *BuildError
	if errors.As(vetErr, &syntax) && !syntax.syntax {
		return buildResult{}, vetErr
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return buildResult{}, ctxError(err, time.Since(start))
	}
	defer release()
	tmp, err := tempDir(root, "build")
	if err != nil {
		return buildResult{}, err
	}
	defer os.RemoveAll(tmp)
	if vetErr != nil {
		return buildResult{wall: time.Since(start)}, b.compilerSyntaxErrors(ctx, p, lim, tmp, syntax)
	}
	// The module lives one level down: the go command ignores a go.mod in
	// the temporary directory's root, which TMPDIR below makes tmp.
	dir := filepath.Join(tmp, "m")
	files := map[string][]byte{p.MainPath: p.Main}
	for name, data := range p.Files {
		files[name] = data
	}
	direct := b.directOK(p)
	if !direct && !b.noSourceLimits {
		// Without the kit, imports do not resolve: the checks see less.
		if diags := checkSource(p, otherGoFiles(p, nil), nil); diags != nil {
			return buildResult{wall: time.Since(start)}, &BuildError{Diagnostics: diags}
		}
	}
	var names []string
	if direct {
		// The compiler reads only the package built: the trusted
		// packages are in the kit, compiled, and their sources unread.
		names = mainFiles(p, files)
	} else {
		names = make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	for _, name := range names {
		// Paths come from the judge, never the learner; check anyway so a
		// bad one can't escape the temporary folder.
		if !validRelPath(name) {
			return buildResult{}, fmt.Errorf("sandbox: bad module path %q", name)
		}
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return buildResult{}, err
		}
		if err := os.WriteFile(full, files[name], 0o644); err != nil {
			return buildResult{}, err
		}
	}
	if direct {
		var res buildResult
		out, err := b.buildDirect(ctx, p, files, names, dir, tmp, lim, &res)
		res.wall = time.Since(start)
		if err != nil {
			return res, err
		}
		return b.readModule(out, res, lim)
	}
	out := filepath.Join(tmp, "module.wasm")
	args := append(append([]string{"build", "-buildmode=c-shared"}, buildFlags...), "-o", out, p.Package)
	r := b.run(ctx, dir, tmp, args, lim, nil)
	res := buildResult{cpu: r.cpu, maxRSS: r.maxRSS, wall: time.Since(start)}
	if r.err != nil {
		var ee *exec.ExitError
		if !errors.As(r.err, &ee) {
			return res, r.err
		}
		if err := limitError(r, lim); err != nil {
			return res, err
		}
		diags := parseDiagnostics(r.stderr, dir, p)
		if len(diags) == 0 {
			if msg := unplacedError(r.stderr, p); msg != "" {
				return res, &BuildError{Message: "your program could not be built: " + msg}
			}
			return res, fmt.Errorf("sandbox: go build failed: %s", firstLines(strings.ReplaceAll(r.stderr, tmp, "."), 20))
		}
		return res, &BuildError{Diagnostics: diags}
	}
	return b.readModule(out, res, lim)
}

// readModule reads a built module and refuses one too large to run.
func (b *Builder) readModule(out string, res buildResult, lim BuildLimits) (buildResult, error) {
	wasm, err := os.ReadFile(out)
	if err != nil {
		return res, err
	}
	// The linker does not notice RLIMIT_FSIZE: it ends with success and a
	// module cut at the limit. That is the net firing, not a module.
	if lim.FileBytes > 0 && int64(len(wasm)) >= lim.FileBytes {
		return res, &BusyError{Wall: res.wall, Limit: sizeString(lim.FileBytes) + " of output"}
	}
	if len(wasm) > maxModuleBytes {
		return res, &BuildError{Message: fmt.Sprintf("the compiled module is %d MiB; the limit is %d MiB", len(wasm)>>20, maxModuleBytes>>20)}
	}
	// A module whose static data alone exceeds the memory cap could never
	// be instantiated; say so now, as the program's error.
	if pages, ok := wasmMinPages(wasm); ok && pages > memoryLimitPages {
		return res, &BuildError{Message: fmt.Sprintf("your program needs %d MiB of memory before it starts (global variables); the limit is %d MiB", pages>>4, memoryLimitPages>>4)}
	}
	res.wasm = wasm
	return res, nil
}

// compilerSyntaxErrors words the syntax errors of a file go/parser
// rejected as the compiler does: the compiler alone is run on the file,
// and it stops after parsing when there is a syntax error. The file is
// still never built; when the compiler finds no syntax error (the two
// parsers disagree), or cannot be run, go/parser's errors stand.
func (b *Builder) compilerSyntaxErrors(ctx context.Context, p Program, lim BuildLimits, tmp string, parsed *BuildError) error {
	const name = "learner.go"
	if err := os.WriteFile(filepath.Join(tmp, name), p.Main, 0o644); err != nil {
		return parsed
	}
	r := b.run(ctx, tmp, tmp, []string{"tool", "compile", "-p", "main", "-o", filepath.Join(tmp, "learner.o"), name}, lim, nil)
	var ee *exec.ExitError
	if r.err != nil && !errors.As(r.err, &ee) {
		if ctx.Err() != nil {
			return r.err
		}
		return parsed
	}
	var diags []Diagnostic
	for _, line := range strings.Split(r.stderr, "\n") {
		if d, ok := parseLine(line); ok && d.File == name && strings.HasPrefix(d.Message, "syntax error") {
			d.File = p.MainName
			diags = append(diags, d)
		}
	}
	if len(diags) == 0 {
		return parsed
	}
	return &BuildError{Diagnostics: diags}
}

// ctxError maps a context's error: a deadline is the machine's (busy),
// a cancellation the caller's.
func ctxError(err error, wall time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &BusyError{Wall: wall}
	}
	return fmt.Errorf("sandbox: build abandoned: %w", err)
}

// runResult is how one go command ended.
type runResult struct {
	err      error // nil, *exec.ExitError, *BusyError, a cancellation or a host error
	stderr   string
	cpu      time.Duration
	wall     time.Duration
	maxRSS   int64
	signaled bool // the go command itself was killed
}

// run runs the go command in dir in a process group of its own, with
// lim's kernel limits on every process of the group and lim.Wall as a
// net. Whatever the outcome, no process of the group outlives run.
func (b *Builder) run(ctx context.Context, dir, tmp string, args []string, lim BuildLimits, watch io.Writer) runResult {
	return b.runTool(ctx, dir, tmp, b.goBin, args, lim, watch, nil, nil)
}

// runTool is run for any tool of the toolchain (bin), with env added to
// the build's environment. Output goes to watch as well as to the result;
// stdout, when given, goes there instead.
func (b *Builder) runTool(ctx context.Context, dir, tmp, bin string, args []string, lim BuildLimits, watch, stdout io.Writer, env []string) runResult {
	start := time.Now()
	if lim.Wall <= 0 {
		lim.Wall = maxBuildWall // a build always has a net
	}
	rctx, cancel := context.WithTimeout(ctx, lim.Wall)
	defer cancel()
	if bin == b.goBin {
		if err := telemetryOff(tmp); err != nil {
			return runResult{err: fmt.Errorf("sandbox: preparing the go command: %w", err)}
		}
	}
	cmd := exec.CommandContext(rctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(b.env[:len(b.env):len(b.env)], "HOME="+tmp, "GOPATH="+filepath.Join(tmp, "gopath"), "TMPDIR="+tmp), env...)
	stderr := &capped{max: maxStderrBytes, watch: watch}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	startGroup(cmd)
	cmd.WaitDelay = buildWaitDelay
	if err := cmd.Start(); err != nil {
		return runResult{err: fmt.Errorf("sandbox: running go build: %w", err)}
	}
	pid := cmd.Process.Pid
	var limErr error
	if lim.CPU > 0 || lim.MemoryBytes > 0 || lim.FileBytes > 0 {
		// The go command starts the compiler and the linker; they start
		// nothing.
		if limErr = limitGroup(pid, lim, bin != b.goBin); limErr != nil {
			killGroup(pid)
		}
	}
	// Wait for the go command to exit without reaping it, end the rest of
	// its group (children orphaned by a kill, anything else), then reap.
	waitExited(pid)
	endGroup(pid)
	err := cmd.Wait()
	r := runResult{err: err, stderr: stderr.String(), wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
		r.maxRSS = maxRSSBytes(ps)
		r.signaled = ps.ExitCode() == -1
	}
	switch {
	case limErr != nil:
		r.err = fmt.Errorf("sandbox: limiting the build: %w", limErr)
	case err == nil:
	case ctx.Err() != nil:
		r.err = ctxError(ctx.Err(), time.Since(start))
	case rctx.Err() != nil:
		r.err = &BusyError{Wall: time.Since(start)}
	}
	return r
}

// telemetryOff turns the go command's telemetry off for HOME home. Left
// on ("local" is the default), the go command starts a detached process
// that outlives the build's process group and writes under HOME after
// the build's folder is removed. GOTELEMETRY in the environment does not
// turn it off; the mode file does.
func telemetryOff(home string) error {
	dir := filepath.Join(home, ".config", "go", "telemetry")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "mode"), []byte("off"), 0o600)
}

// limitError explains a build that a kernel limit ended, as a net that
// fired (*BusyError), or returns nil. Only lines of the toolchain's own
// (never a diagnostic, which starts with a file position the program's
// text follows) are read, so a program cannot fake one.
func limitError(r runResult, lim BuildLimits) error {
	killed, memory, file := r.signaled, false, false
	for _, line := range strings.Split(r.stderr, "\n") {
		if _, ok := parseLine(line); ok {
			continue
		}
		switch {
		// A tool whose memory ran out where its runtime cannot say so (a
		// fault in the collector, measured with the generic chain at
		// 512 MiB, 454 MiB peak RSS) crashes on a signal instead; past
		// half its limit that is taken for the limit.
		case (strings.HasPrefix(line, "SIGSEGV: ") || strings.HasPrefix(line, "fatal error: unexpected signal")) &&
			lim.MemoryBytes > 0 && r.maxRSS >= lim.MemoryBytes/2:
			memory = true
		case strings.Contains(line, "signal: killed"), strings.Contains(line, "signal: CPU time limit exceeded"):
			killed = true
		case strings.HasPrefix(line, "fatal error: ") && (strings.Contains(line, "out of memory") || strings.Contains(line, "cannot allocate memory")),
			strings.HasPrefix(line, "runtime: out of memory"):
			memory = true
		case strings.HasSuffix(line, "file too large"):
			file = true
		}
	}
	switch {
	case memory && lim.MemoryBytes > 0:
		return &BusyError{Wall: r.wall, Limit: sizeString(lim.MemoryBytes) + " of memory"}
	case file && lim.FileBytes > 0:
		return &BusyError{Wall: r.wall, Limit: sizeString(lim.FileBytes) + " of output"}
	// The kernel checks RLIMIT_CPU on its clock tick and the accounting
	// rounds, so a process it killed may show a little under the limit.
	case killed && lim.CPU > 0 && r.cpu >= lim.CPU-lim.CPU/10:
		return &BusyError{Wall: r.wall, Limit: lim.CPU.String() + " of CPU time"}
	}
	return nil
}

func sizeString(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return strconv.FormatInt(n>>30, 10) + " GiB"
	}
	return strconv.FormatInt(n>>20, 10) + " MiB"
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// capped keeps the first max bytes written to it and passes every write
// to watch, if any. A compiler's crash dump can be megabytes long.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	max   int
	watch io.Writer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	if c.watch != nil {
		c.watch.Write(p)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// wasmMinPages returns the initial size, in 64 KiB pages, of the memory a
// wasm module defines.
func wasmMinPages(m []byte) (uint32, bool) {
	if len(m) < 8 || string(m[:4]) != "\x00asm" {
		return 0, false
	}
	uleb := func(b []byte) (uint32, int) {
		var v uint32
		for i := 0; i < len(b) && i < 5; i++ {
			v |= uint32(b[i]&0x7f) << (7 * i)
			if b[i]&0x80 == 0 {
				return v, i + 1
			}
		}
		return 0, 0
	}
	for i := 8; i < len(m); {
		id := m[i]
		size, n := uleb(m[i+1:])
		if n == 0 || i+1+n+int(size) > len(m) {
			return 0, false
		}
		body := m[i+1+n : i+1+n+int(size)]
		i += 1 + n + int(size)
		if id != 5 { // the memory section
			continue
		}
		count, n := uleb(body)
		if n == 0 || count == 0 || len(body) < n+2 {
			return 0, false
		}
		pages, k := uleb(body[n+1:]) // after the limits' flags byte
		return pages, k > 0
	}
	return 0, false
}

func validRelPath(p string) bool {
	return p != "" && path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../") && !strings.Contains(p, `\`)
}

var diagRE = regexp.MustCompile(`^(.+?\.go):(\d+)(?::(\d+))?: (.*)$`)

func parseLine(line string) (Diagnostic, bool) {
	m := diagRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return Diagnostic{}, false
	}
	ln, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	return Diagnostic{File: m[1], Line: ln, Column: col, Message: m[4]}, true
}

// parseDiagnostics turns go build's output into diagnostics, naming the
// untrusted file by MainName and other files by their module path, with
// the temporary folder stripped.
func parseDiagnostics(out, dir string, p Program) []Diagnostic {
	var diags []Diagnostic
	mainDir := path.Dir(p.MainPath)
	mod := modulePath(p.Files["go.mod"])
	for _, line := range strings.Split(out, "\n") {
		line = strings.ReplaceAll(line, dir+string(filepath.Separator), "")
		d, ok := parseLine(line)
		if !ok {
			continue
		}
		f := filepath.ToSlash(strings.TrimPrefix(d.File, "./"))
		// With -trimpath the linker names files by import path:
		// "workspace/solution.go" for the module's "solution.go".
		if mod != "" && strings.HasPrefix(f, mod+"/") {
			f = strings.TrimPrefix(f, mod+"/")
		}
		switch {
		case f == p.MainPath || path.Join(mainDir, f) == p.MainPath:
			d.File = p.MainName
		case !strings.Contains(f, "/") && mainDir != ".":
			d.File = path.Join(mainDir, f)
		default:
			d.File = f
		}
		diags = append(diags, d)
	}
	return diags
}

// hostTrouble marks messages of the machine's, not the program's.
var hostTrouble = []string{"no space left on device", "permission denied", "read-only file system", "too many open files", "resource temporarily unavailable", "input/output error"}

// unplacedError returns the message of an error without a position that
// the toolchain reported for the package built, whose only untrusted file
// is the learner's: the linker's "too much data" for globals that fit
// one by one but not together, say. It returns "" for anything else,
// which stays the host's error.
func unplacedError(stderr string, p Program) string {
	ip := modulePath(p.Files["go.mod"])
	if pkg := path.Clean(strings.TrimPrefix(p.Package, "./")); pkg != "." {
		ip = path.Join(ip, pkg)
	}
	var msg []string
	in := false
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "# ") {
			in = strings.TrimPrefix(line, "# ") == ip
			continue
		}
		if in && strings.TrimSpace(line) != "" {
			msg = append(msg, strings.TrimSpace(line))
		}
	}
	text := strings.Join(msg, "; ")
	for _, h := range hostTrouble {
		if strings.Contains(strings.ToLower(text), h) {
			return ""
		}
	}
	if len(text) > 500 {
		text = text[:500] + "…"
	}
	return text
}

var moduleRE = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?\s*$`)

// modulePath is the path a go.mod declares, or "".
func modulePath(gomod []byte) string {
	if m := moduleRE.FindSubmatch(gomod); m != nil {
		return string(m[1])
	}
	return ""
}
