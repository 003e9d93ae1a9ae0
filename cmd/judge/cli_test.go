package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/tools/txtar"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
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
	return judgeCmdStdin(t, dir, "", args...)
}

// judgeCmdStdin runs judge with stdin as its standard input (not a
// terminal, as when a password is piped in).
func judgeCmdStdin(t *testing.T, dir, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(judgeBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "CTRLJUDGE_CACHE="+filepath.Join(dir, ".cache"), "CTRLJUDGE_DATA=")
	cmd.Stdin = strings.NewReader(stdin)
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

func TestListInChapterOrder(t *testing.T) {
	out, code := judgeCmd(t, t.TempDir(), "list")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	// Chapter by chapter (in the chapters' order), then in each chapter's
	// own order: 175, the newest, is the first exercise of the course.
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && len(l) > 2 && l[:2] == "  " {
			got = append(got, f[0])
		} else if len(f) > 0 {
			got = append(got, "|")
		}
	}
	if want := "| 175 171 174 | 172 176 173"; strings.Join(got, " ") != want {
		t.Errorf("list order %q, want %q\n%s", strings.Join(got, " "), want, out)
	}
}

func TestStartWritesTheStatementAndShowPrintsIt(t *testing.T) {
	dir := t.TempDir()
	out, code := judgeCmd(t, dir, "start", "171")
	if code != 0 {
		t.Fatalf("start: exit %d\n%s", code, out)
	}
	// The hint leads to the statement and the tests, never to the solution.
	if strings.Contains(out, "judge solution") || !strings.Contains(out, "README.md") ||
		!strings.Contains(out, "judge show 171") || !strings.Contains(out, "judge test 171 --run") {
		t.Errorf("start's hint:\n%s", out)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "171-reconcile-loop", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(readme)
	for _, want := range []string{"# 171. The reconcile loop\n", "Write the heart of a Deployment controller", "## The rules", "judge test 171 --list"} {
		if !strings.Contains(doc, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	// Neither front matter, nor the explanation, nor the solution.
	for _, leak := range []string{"slug: reconcile-loop", "<!-- explanation -->", "Why each rule is there", "Not found means done"} {
		if strings.Contains(doc, leak) {
			t.Errorf("README.md holds %q", leak)
		}
	}
	sol, _ := judgeCmd(t, dir, "solution", "171")
	for _, l := range strings.Split(sol[strings.Index(sol, "package main"):], "\n") {
		if l = strings.TrimSpace(l); len(l) > 30 && !strings.HasPrefix(l, "//") && strings.Contains(doc, l) {
			if b, _ := os.ReadFile(filepath.Join(dir, "171-reconcile-loop", "reconcile-loop.go")); !strings.Contains(string(b), l) {
				t.Errorf("README.md holds a line of the solution: %q", l)
			}
		}
	}
	// A second start keeps the learner's notes in README.md.
	os.WriteFile(filepath.Join(dir, "171-reconcile-loop", "README.md"), []byte("my notes\n"), 0o644)
	if out, code = judgeCmd(t, dir, "start", "171"); code != 0 || !strings.Contains(out, "kept your existing README.md") {
		t.Errorf("second start: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "171-reconcile-loop", "README.md")); string(b) != "my notes\n" {
		t.Error("start overwrote README.md")
	}

	// judge show prints the same statement; not a terminal: no colour, no wrapping.
	out, code = judgeCmd(t, dir, "show", "reconcile-loop")
	if code != 0 || out != doc {
		t.Errorf("show: exit %d; differs from the workspace README:\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "show"); code != 2 || !strings.Contains(out, "usage: judge show ID") {
		t.Errorf("show without an ID: exit %d\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "show", "999"); code != 1 || !strings.Contains(out, "judge list") {
		t.Errorf("show 999: exit %d\n%s", code, out)
	}
}

func TestTestNamesAreCheckedBeforeBuilding(t *testing.T) {
	dir := t.TempDir()
	out, code := judgeCmd(t, dir, "test", "171", "--list")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := cat.Find("171")
	if err != nil {
		t.Fatal(err)
	}
	n := len(ex.Suite.Tests)
	if code != 0 || len(lines) != n+1 || !strings.HasPrefix(lines[n], "generated 1 .. generated 4:") {
		t.Fatalf("--list: exit %d, %d lines; want %d tests and the generated ones\n%s", code, len(lines), n, out)
	}
	if l := lines[0]; !strings.HasPrefix(l, "scale up from zero ") || !strings.Contains(l, " sample ") || !strings.HasSuffix(l, "no faults") {
		t.Errorf("--list, first line %q", l)
	}
	if !strings.Contains(out, "scale up across restarts") || !strings.Contains(out, "faults: restart, crash-after-write, duplicate, missed-event\n") {
		t.Errorf("--list lacks planned faults:\n%s", out)
	}

	// The file does not even exist: a usage error is found first.
	out, code = judgeCmd(t, dir, "test", "171", "missing.go", "--test", "scale up form zero")
	if code != 2 || !strings.Contains(out, "171 has no test named 'scale up form zero'. Did you mean --test 'scale up from zero'?") ||
		!strings.Contains(out, "\n  two Deployments side by side\n") || !strings.Contains(out, "judge test 171 --list") ||
		strings.Contains(out, "internal error") {
		t.Errorf("misspelled test: exit %d\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "test", "171", "missing.go", "--test", "nothing like it at all, really"); code != 2 || strings.Contains(out, "Did you mean") {
		t.Errorf("unknown test: exit %d\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "test", "171", "missing.go", "--run", "--test", "scale to zero"); code != 2 || !strings.Contains(out, "not a sample test") {
		t.Errorf("--run with a non-sample test: exit %d\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "test", "171", "missing.go", "--faults", "restart,crash"); code != 2 || !strings.Contains(out, `no fault named "crash"`) {
		t.Errorf("unknown fault: exit %d\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "test", "171", "a.go", "b.go"); code != 2 || !strings.Contains(out, "usage: judge test ID") {
		t.Errorf("two files: exit %d\n%s", code, out)
	}
}

func TestReplayNamesTheLearnersFile(t *testing.T) {
	dir := t.TempDir()
	out, code := judgeCmd(t, dir, "start", "171", "--dir", "ws")
	if code != 0 {
		t.Fatalf("start: exit %d\n%s", code, out)
	}
	starter, _ := os.ReadFile(filepath.Join(dir, "ws", "reconcile-loop.go"))
	os.MkdirAll(filepath.Join(dir, "t"), 0o755)
	os.WriteFile(filepath.Join(dir, "t", "loop.go"), starter, 0o644)

	out, code = judgeCmd(t, dir, "test", "171", "t/loop.go")
	if code != 1 || !strings.Contains(out, "replay: judge test 171 t/loop.go --seed 1 --test '") {
		t.Fatalf("starter: exit %d\n%s", code, out)
	}
	if n, m := strings.Count(out, "judge test 171 "), strings.Count(out, "judge test 171 t/loop.go --seed 1 --test '"); n != m {
		t.Errorf("%d replay commands, %d of them with the file:\n%s", n, m, out)
	}
	// The verdict itself does not depend on where the file is.
	out, _ = judgeCmd(t, dir, "test", "171", "t/loop.go", "--json")
	if !strings.Contains(out, `"replay": "judge test 171 --seed 1 --test '`) || strings.Contains(out, "loop.go --seed") {
		t.Errorf("--json replay changed:\n%s", out)
	}

	// A path that needs quoting is quoted, a run's --faults is kept, and
	// the smallest case names the file too.
	os.MkdirAll(filepath.Join(dir, "my code"), 0o755)
	os.WriteFile(filepath.Join(dir, "my code", "loop.go"), starter, 0o644)
	out, code = judgeCmd(t, dir, "test", "171", "my code/loop.go", "--test", "scale up across restarts", "--faults", "restart,duplicate")
	for _, want := range []string{
		"replay: judge test 171 'my code/loop.go' --seed 1 --test 'scale up across restarts' --faults restart,duplicate\n",
		"smallest case: it fails the same way with only restart: judge test 171 'my code/loop.go' --seed 1 --test 'scale up across restarts' --faults restart\n",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("exit %d; want %q in\n%s", code, want, out)
		}
	}
}

func TestInstructorAddInAFreshClone(t *testing.T) {
	dir := t.TempDir()
	// A bad name: nothing asked, nothing created.
	out, code := judgeCmdStdin(t, dir, "a long enough password\n", "instructor", "add", " ")
	if code != 1 || !strings.Contains(out, "instructor name") {
		t.Errorf("blank name: exit %d\n%s", code, out)
	}
	// A password too short: the new database and folder go again.
	if out, code = judgeCmdStdin(t, dir, "short\n", "instructor", "add", "ada"); code != 1 || !strings.Contains(out, "at least 10 characters") {
		t.Errorf("short password: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("a failed add left ./data behind")
	}

	out, code = judgeCmdStdin(t, dir, "a long enough password\n", "instructor", "add", "ada")
	if code != 0 || !strings.Contains(out, `added instructor "ada"`) {
		t.Fatalf("add ada: exit %d\n%s", code, out)
	}
	fi, err := os.Stat(filepath.Join(dir, "data"))
	if err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("./data: %v %v; want a 0750 folder", fi, err)
	}
	// Taken: said before a password is read (none is piped in).
	if out, code = judgeCmdStdin(t, dir, "", "instructor", "add", "ada"); code != 1 || !strings.Contains(out, `already an instructor named "ada"`) {
		t.Errorf("add ada twice: exit %d\n%s", code, out)
	}
	if out, code = judgeCmdStdin(t, dir, "", "instructor", "passwd", "bob"); code != 1 || !strings.Contains(out, `no instructor named "bob"`) {
		t.Errorf("passwd bob: exit %d\n%s", code, out)
	}
	if out, code = judgeCmdStdin(t, dir, "another long password\n", "instructor", "passwd", "ada"); code != 0 {
		t.Errorf("passwd ada: exit %d\n%s", code, out)
	}
	if out, code = judgeCmd(t, dir, "instructor", "list"); code != 0 || !strings.HasPrefix(out, "ada ") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
}

// A generated scenario replays by name, and a scenario saved from a
// verdict replays with --scenario; a broken scenario file is refused
// before anything is built.
func TestGeneratedScenariosReplay(t *testing.T) {
	dir := t.TempDir()
	sol, _ := judgeCmd(t, dir, "solution", "171")
	file := filepath.Join(dir, "mine.go")
	os.WriteFile(file, []byte(sol[strings.Index(sol, "package main"):]), 0o644)
	out, rc := judgeCmd(t, dir, "test", "171", file, "--test", "generated 2", "--seed", "4")
	if rc != 0 || !strings.Contains(out, "generated 2") || !strings.Contains(out, "1 passed, 0 failed") {
		t.Fatalf("--test 'generated 2': exit %d\n%s", rc, out)
	}
	scenario := `  - name: "two Pods, one held"
    seed: 7
    objects: |
      kind: Deployment
      apiVersion: apps/v1
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: web, image: "web:v1"}]
        strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
      ---
      kind: Pod
      apiVersion: v1
      metadata:
        name: web-0a
        labels: {app: web}
        finalizers: [example.com/hold]
        deletionTimestamp: "2026-01-01T00:00:00Z"
        ownerReferences: [{kind: Deployment, name: web, controller: true}]
      spec:
        containers: [{name: web, image: "web:v1"}]
      status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
    steps:
      - {"release": {"Pod/web-0a": ["example.com/hold"]}}
`
	sf := filepath.Join(dir, "scenario.yaml")
	os.WriteFile(sf, []byte(scenario), 0o644)
	out, rc = judgeCmd(t, dir, "test", "171", file, "--scenario", sf)
	if rc != 0 || !strings.Contains(out, "two Pods, one held") || !strings.Contains(out, "1 passed, 0 failed") {
		t.Fatalf("--scenario: exit %d\n%s", rc, out)
	}
	os.WriteFile(sf, []byte("  - name: x\n    steps: [{fail: Pod/first, delete: Pod/last}]\n"), 0o644)
	if out, rc = judgeCmd(t, dir, "test", "171", file, "--scenario", sf); rc == 0 || !strings.Contains(out, "exactly one of") {
		t.Fatalf("a broken scenario: exit %d\n%s", rc, out)
	}
}

// learnerFixture is the learner's file of judge/testdata/learner/NAME.txtar.
func learnerFixture(t *testing.T, name string) []byte {
	t.Helper()
	ar, err := txtar.ParseFile("../../judge/testdata/learner/" + name + ".txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if strings.HasSuffix(f.Name, ".go") {
			return f.Data
		}
	}
	t.Fatalf("%s.txtar holds no Go file", name)
	return nil
}

// rawControl describes the first character in s that a terminal would
// act on or that could disguise text, or says "".
func rawControl(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"),
			r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("%U at byte %d: %q", r, i, s[max(0, i-40):min(len(s), i+40)])
		}
	}
	return ""
}

// A file whose panic, output and written objects are full of terminal
// escapes cannot act on the terminal of whoever judges it: judge test
// shows them escaped.
func TestLearnerTextIsInert(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "evil.go")
	os.WriteFile(file, learnerFixture(t, "escapes"), 0o644)
	out, code := judgeCmd(t, dir, "test", "171", file, "--run")
	if code != 1 || !strings.Contains(out, "Runtime error") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if bad := rawControl(out); bad != "" {
		t.Errorf("judge test printed %s", bad)
	}
	const evil = `\x1b[2J\x1b[H\x1b[32m0 failed\x1b[0m\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x0d\u0085\u009b31m\x7f\u202eevil\u2066x\u2069`
	for _, want := range []string{
		"Runtime: Your controller panicked: boom:" + evil + "\n",
		"  | stdout:" + evil + "\n", "  | stderr:" + evil + "\n", "  | log:" + evil + "\n",
		"controller create Pod evil-0 (web:v1" + evil,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output, escaped:\n%s", verdict.Inert(out))
	}
}
