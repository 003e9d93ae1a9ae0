package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// These tests run the judge command as a learner would: a built binary,
// in a fresh folder.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func judgeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "judge-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "judge")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("%v: %s", binErr, binPath)
	}
	return binPath
}

func judgeCmd(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(judgeBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "CTRLJUDGE_CACHE="+filepath.Join(dir, ".cache"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

func TestLearnerFlow(t *testing.T) {
	dir := t.TempDir()
	out, code := judgeCmd(t, dir, "list")
	if code != 0 || !strings.Contains(out, "171") || !strings.Contains(out, "The reconcile loop") {
		t.Fatalf("list: %d %s", code, out)
	}
	if out, code = judgeCmd(t, dir, "start", "171"); code != 0 {
		t.Fatalf("start: %d %s", code, out)
	}
	ws := filepath.Join(dir, "171-reconcile-loop")
	file := filepath.Join(ws, "reconcile-loop.go")
	for _, f := range []string{"go.mod", "ctrljudge_main.go", "sdk/go.mod", "sdk/judge/ctrl/client.go", "reconcile-loop.go"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("workspace lacks %s", f)
		}
	}
	// The workspace builds and vets offline with the plain toolchain.
	vet := exec.Command("go", "vet", ".")
	vet.Dir = ws
	vet.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if b, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet in the workspace: %v\n%s", err, b)
	}
	// start never overwrites the learner's work.
	os.WriteFile(file, []byte("// mine\n"), 0o644)
	if out, code = judgeCmd(t, dir, "start", "reconcile-loop"); code != 0 || !strings.Contains(out, "kept your existing reconcile-loop.go") {
		t.Fatalf("second start: %d %s", code, out)
	}
	if b, _ := os.ReadFile(file); string(b) != "// mine\n" {
		t.Fatal("start overwrote the learner's file")
	}

	// The starter fails, with the oracle, faults, seed and replay line.
	starter, _ := judgeCmd(t, dir, "solution", "171") // ensure the solution prints
	if !strings.Contains(starter, "func Reconcile") {
		t.Fatalf("solution: %s", starter)
	}
	os.Remove(file)
	judgeCmd(t, dir, "start", "171")
	out, code = judgeCmd(t, ws, "test", "171")
	if code != 1 || !strings.Contains(out, "✗ ") || !strings.Contains(out, "replay: judge test 171 --seed 1 --test '") {
		t.Fatalf("starter: exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "failed") || strings.HasSuffix(last, " 0 failed") {
		t.Fatalf("last line %q", last)
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("colour with NO_COLOR set")
	}

	// A compile error points at the learner's line.
	os.WriteFile(file, []byte("package main\n\nfunc Reconcile() {\n\tundefinedThing()\n}\n"), 0o644)
	out, code = judgeCmd(t, ws, "test", "171", "--run")
	if code != 1 || !strings.Contains(out, "reconcile-loop.go:4:2: undefined: undefinedThing") {
		t.Fatalf("compile error: exit %d\n%s", code, out)
	}
}

func TestSolutionPassesAndJSONIsStable(t *testing.T) {
	dir := t.TempDir()
	sol, _ := judgeCmd(t, dir, "solution", "171")
	code := sol[strings.Index(sol, "//"):]
	if i := strings.Index(sol, "package main"); i >= 0 {
		code = sol[i:]
	}
	file := filepath.Join(dir, "mine.go")
	os.WriteFile(file, []byte(code), 0o644)
	out, rc := judgeCmd(t, dir, "test", "171", file)
	if rc != 0 || !strings.Contains(out, " passed, 0 failed") {
		t.Fatalf("solution: exit %d\n%s", rc, out)
	}
	a, _ := judgeCmd(t, dir, "test", "171", file, "--json", "--seed", "9")
	os.RemoveAll(filepath.Join(dir, ".cache")) // a cold second run
	b, _ := judgeCmd(t, dir, "test", "171", file, "--json", "--seed", "9")
	if a != b || !strings.Contains(a, `"status": "pass"`) || !strings.Contains(a, `"seed": 9`) {
		t.Fatalf("--json differs between runs or lacks fields:\n%s\n%s", a, b)
	}
}
