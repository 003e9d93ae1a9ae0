//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

// Hostile files: each testdata/hostile/*.txtar is a learner's file and
// what its build must end in ("want": error build|busy|none, message and
// diagnostic substrings, which limits apply, and "net: only" to build
// without the source limits, so that a bomb reaches the kernel's).
// Every build, whatever its end, must leave no process behind and stay
// within its memory.

// hostileLimits are tighter than the defaults so that bombs end in
// seconds; "cpu", "memory" and "file" loosen the others so that the named
// limit is the one that fires.
func hostileLimits(kind string) BuildLimits {
	lim := BuildLimits{CPU: 10 * time.Second, MemoryBytes: 512 << 20, FileBytes: 64 << 20, Wall: 2 * time.Minute}
	switch kind {
	case "default":
		lim = DefaultBuildLimits()
	case "cpu":
		lim.CPU, lim.MemoryBytes = 4*time.Second, 4<<30
	case "memory":
		lim.CPU = 60 * time.Second
	case "file":
		lim.MemoryBytes = maxBuildMemoryBytes
	}
	return lim
}

const hostileGlue = "package main\n\nfunc main() {}\n"

func hostileProgram(src []byte) Program {
	return Program{
		Files:    map[string][]byte{"go.mod": []byte("module hostile\n\ngo 1.26\n"), "glue.go": []byte(hostileGlue)},
		Main:     src,
		MainPath: "learner.go", MainName: "learner.go", Package: ".",
	}
}

// testBuilder is a Builder whose builds keep their temporary folders under
// a root of the test's, so that leftover processes can be found by it.
func testBuilder(t *testing.T) (*Builder, string) {
	t.Helper()
	return toolchainBuilder(t)
}

// toolchainBuilder is a Builder for a test that runs the toolchain, and
// a folder of the test's.
func toolchainBuilder(t *testing.T) (*Builder, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the Go toolchain; skipped with -short")
	}
	b, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	return b, t.TempDir()
}

// leftovers lists the live processes whose command line or working
// directory mentions root: compile, link, go, anything a build started.
func leftovers(root string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		st, ok := procStat(pid)
		if !ok || st.state == 'Z' || st.state == 'X' {
			continue // a zombie holds no memory and runs nothing
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		if strings.Contains(string(cmdline), root) || strings.HasPrefix(cwd, root) {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// assertNothingLeft fails t if a process of a build under root still runs.
// Kill and reap are asynchronous for orphans, so allow a moment.
func assertNothingLeft(t *testing.T, root string) {
	t.Helper()
	var left []string
	for range 50 {
		if left = leftovers(root); len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("processes of the build still running after it returned:\n%s", strings.Join(left, "\n"))
}

func TestHostileFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/hostile/*.txtar")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	b, _ := testBuilder(t)
	nb := netBuilder(t)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			src, wants := readFixture(t, f)
			kind := ""
			if l := wants["limits"]; len(l) > 0 {
				kind = l[0]
			}
			lim := hostileLimits(kind)
			// A root of its own per file, so that parallel files don't
			// see each other's processes.
			root := t.TempDir()
			start := time.Now()
			b := b
			if n := wants["net"]; len(n) > 0 && n[0] == "only" {
				b = nb
			}
			res, err := b.buildIn(context.Background(), hostileProgram(src), lim, root)
			t.Logf("%v wall, %v CPU, %d MiB peak RSS: %v", time.Since(start).Round(time.Millisecond), res.cpu.Round(time.Millisecond), res.maxRSS>>20, firstLines(errString(err), 3))
			assertNothingLeft(t, root)
			if max := lim.MemoryBytes + 256<<20; res.maxRSS > max {
				t.Errorf("peak RSS %d MiB, over %d MiB", res.maxRSS>>20, max>>20)
			}
			checkVerdict(t, err, wants)
		})
	}
}

// readFixture reads a learner's file and its "want" lines, by key.
func readFixture(t *testing.T, f string) ([]byte, map[string][]string) {
	t.Helper()
	ar, err := txtar.ParseFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var want, src []byte
	for _, file := range ar.Files {
		if file.Name == "want" {
			want = file.Data
		} else {
			src = file.Data
		}
	}
	wants := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		wants[k] = append(wants[k], v)
	}
	return src, wants
}

// checkVerdict fails t unless err is what wants says: its kind ("error":
// none, build or busy), and message and diagnostic substrings.
func checkVerdict(t *testing.T, err error, wants map[string][]string) {
	t.Helper()
	var be *BuildError
	var busy *BusyError
	switch e := wants["error"]; {
	case len(e) == 0:
		t.Fatal("no error: line in want")
	case e[0] == "none":
		if err != nil {
			t.Fatalf("build failed: %v", err)
		}
	case e[0] == "build":
		if !errors.As(err, &be) {
			t.Fatalf("got %T %v, want a *BuildError", err, err)
		}
	case e[0] == "busy":
		if !errors.As(err, &busy) {
			t.Fatalf("got %T %v, want a *BusyError", err, err)
		}
	}
	for _, m := range wants["message"] {
		if !strings.Contains(errString(err), m) {
			t.Errorf("error %q lacks %q", errString(err), m)
		}
	}
	for _, d := range wants["diagnostic"] {
		found := false
		if be != nil {
			for _, got := range be.Diagnostics {
				found = found || strings.Contains(got.String(), d)
			}
		}
		if !found {
			t.Errorf("no diagnostic %q in %v", d, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// netBuilder is a testBuilder without the source limits, so that a
// compile bomb runs into the kernel's limits, the net.
func netBuilder(t *testing.T) *Builder {
	t.Helper()
	b, _ := testBuilder(t)
	b.noSourceLimits = true
	return b
}

// The wall-clock net is the machine's fault, never the program's: a build
// it stops is a *BusyError, and nothing of it is left running.
func TestWallNetIsBusyNotBuildError(t *testing.T) {
	b, root := netBuilder(t), t.TempDir()
	src := chainSource(t)
	lim := hostileLimits("cpu")
	lim.CPU, lim.Wall = 60*time.Second, time.Second
	start := time.Now()
	_, err := b.buildIn(context.Background(), hostileProgram(src), lim, root)
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %T %v, want a *BusyError", err, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the build returned %v after its 1s net", d)
	}
	assertNothingLeft(t, root)
}

// A caller that gives up ends the build at once; its error is the
// caller's (context.Canceled), not the program's.
func TestCancelledBuildEndsItsProcesses(t *testing.T) {
	b, root := netBuilder(t), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	_, err := b.buildIn(ctx, hostileProgram(chainSource(t)), hostileLimits("cpu"), root)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %T %v, want context.Canceled", err, err)
	}
	var be *BuildError
	if errors.As(err, &be) {
		t.Fatal("a cancelled build is not the program's error")
	}
	assertNothingLeft(t, root)
}

// Builds beyond MaxConcurrent wait their turn; one whose context ends
// while waiting is not the program's fault.
func TestBuildsWaitForASlot(t *testing.T) {
	b := &Builder{MaxConcurrent: 1}
	release, err := b.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = b.build(ctx, Program{Main: []byte("package main\n"), MainName: "learner.go"}, BuildLimits{Wall: time.Minute})
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("waiting past the deadline: got %T %v, want a *BusyError", err, err)
	}
	release()
	if r2, err := b.acquire(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		r2()
	}
}

func chainSource(t *testing.T) []byte {
	ar, err := txtar.ParseFile("testdata/hostile/generic-chain-cpu.txtar")
	if err != nil {
		t.Fatal(err)
	}
	return ar.Files[1].Data
}

// WarmStd leaves the build cache holding the wasip1 standard library, so
// that a learner's build compiles only the learner's package.
func TestWarmStdCoversLearnerBuilds(t *testing.T) {
	b, root := testBuilder(t)
	cold := os.Getenv("CTRLJUDGE_COLD_STD") != ""
	if cold {
		// A fresh, empty build cache: the figures in RATIONALE.md.
		cache := t.TempDir()
		for i, kv := range b.env {
			if strings.HasPrefix(kv, "GOCACHE=") {
				b.env[i] = "GOCACHE=" + cache
			}
		}
	}
	var progress strings.Builder
	start := time.Now()
	if err := b.WarmStd(context.Background(), &progress); err != nil {
		t.Fatal(err)
	}
	t.Logf("WarmStd: %v\n%s", time.Since(start).Round(time.Millisecond), progress.String())
	if cold && !strings.Contains(progress.String(), "packages of the standard library") {
		t.Errorf("a cold WarmStd reported no progress: %q", progress.String())
	}
	// The learner's build, with -x: which tools did it run?
	src := []byte("package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"net/url\"\n\t\"text/template\"\n)\n\nvar (\n\t_ = json.Marshal\n\t_ = fmt.Sprint\n\t_ = url.Parse\n\t_ = template.New\n)\n")
	// A source of its own, so that its own package is never cached.
	src = append(src, "\n// "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n"...)
	dir := filepath.Join(root, "m")
	p := hostileProgram(src)
	p.Files["learner.go"] = src
	for name, data := range p.Files {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	args := append(append([]string{"build", "-buildmode=c-shared"}, buildFlags...), "-x", "-o", filepath.Join(root, "out.wasm"), ".")
	start = time.Now()
	r := b.run(context.Background(), dir, root, args, DefaultBuildLimits(), nil)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, firstLines(r.stderr, 30))
	}
	var compiled []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasSuffix(f[0], "/compile") {
			for i, a := range f {
				if a == "-p" && i+1 < len(f) {
					compiled = append(compiled, f[i+1])
				}
			}
		}
	}
	t.Logf("learner build after WarmStd: %v wall, %v CPU, compiled %v", time.Since(start).Round(time.Millisecond), r.cpu.Round(time.Millisecond), compiled)
	if len(compiled) != 1 || compiled[0] != "main" {
		t.Errorf("after WarmStd a learner's build compiled %v, want only its own package main", compiled)
	}
}

// What fails on the host's side is neither the program's nor the load's.
func TestHostFailuresArePlainErrors(t *testing.T) {
	b, root := testBuilder(t)
	p := hostileProgram([]byte("package main\n"))
	notDir := filepath.Join(root, "file")
	os.WriteFile(notDir, nil, 0o644)
	_, err := b.buildIn(context.Background(), p, DefaultBuildLimits(), notDir)
	noGo := &Builder{goBin: filepath.Join(root, "no-go"), env: b.env, Limits: DefaultBuildLimits()}
	_, err2 := noGo.Build(context.Background(), p)
	for _, err := range []error{err, err2} {
		var be *BuildError
		var busy *BusyError
		if err == nil || errors.As(err, &be) || errors.As(err, &busy) {
			t.Errorf("got %T %v, want a plain error", err, err)
		}
	}
}

// The go command runs with its telemetry off. Left on ("local" is the
// default), it writes counters under HOME, the build's folder, and a
// process it starts detached may write there after the folder is removed:
// builds' folders were found left behind, holding only that.
func TestGoCommandTelemetryOff(t *testing.T) {
	b, root := testBuilder(t)
	var out bytes.Buffer
	r := b.runTool(context.Background(), root, root, b.goBin, []string{"env", "GOTELEMETRY"}, DefaultBuildLimits(), nil, &out, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := strings.TrimSpace(out.String()); got != "off" {
		t.Errorf("the go command's telemetry is %q", got)
	}
}

// The linker does not notice its file-size limit: it exits with success
// and a module cut at the limit. That is the net, not a module to run
// (nor one to cache).
func TestLinkCutByFileLimitIsBusy(t *testing.T) {
	b, root := testBuilder(t)
	lim := DefaultBuildLimits()
	lim.FileBytes = 1 << 20 // a module of fmt and json is larger
	src := []byte("package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n)\n\nvar (\n\t_ = json.Marshal\n\t_ = fmt.Sprint\n)\n")
	res, err := b.buildIn(context.Background(), hostileProgram(src), lim, root)
	var busy *BusyError
	if !errors.As(err, &busy) || res.wasm != nil {
		t.Fatalf("got a module of %d bytes and %T %v, want a *BusyError", len(res.wasm), err, err)
	}
	if !strings.Contains(err.Error(), "1 MiB of output") {
		t.Errorf("error %q does not name the limit", err)
	}
}
