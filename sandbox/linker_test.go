package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// linkerDir is where the engine keeps WarmLinker's linker, so that the
// tests build it once for every package that needs it.
func linkerDir(t testing.TB) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache folder:", err)
	}
	return filepath.Join(dir, "ctrljudge")
}

// warmLinker runs WarmLinker on b with the engine's folder and waits, should
// another process (another package's tests) be building the linker there,
// until it is in place.
func warmLinker(t testing.TB, b *Builder) {
	t.Helper()
	dir := linkerDir(t)
	if err := b.WarmLinker(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); b.Linker() == toolchainLinker && b.linkerSoon.Load() != nil; b.linkerPath() {
		if _, err := os.Stat(filepath.Dir(b.linkerFile(dir)) + ".failed"); err == nil || time.Since(start) > 10*time.Minute {
			t.Fatal("the linker another process was building never came")
		}
		time.Sleep(time.Second)
	}
}

// toolchainBuilder is a Builder for a test that runs the toolchain,
// linking with the toolchain's own linker, and a folder of the test's.
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

// The linker WarmLinker builds writes the module the toolchain's linker
// writes, byte for byte: only where its heap's memory comes from differs.
func TestLinkerWritesTheSameModule(t *testing.T) {
	ours, _ := toolchainBuilder(t)
	if !hugePagesOnRequest() {
		if err := ours.WarmLinker(context.Background(), t.TempDir(), nil); err != nil || ours.Linker() != toolchainLinker {
			t.Fatalf("without huge pages on request: %v, linker %q; want nothing built", err, ours.Linker())
		}
		t.Skip("transparent huge pages are not in madvise mode here: nothing to compare")
	}
	warmLinker(t, ours)
	if got := ours.Linker(); got != hugeHeapLinker {
		t.Fatalf("linker %q after WarmLinker", got)
	}
	if ours.linkerPath() == filepath.Join(ours.toolDir, "link") {
		t.Fatal("WarmLinker's builder still links with the toolchain's linker")
	}
	theirs, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("package main\n\nimport (\n\t\"fmt\"\n\t\"sort\"\n)\n\nvar tag = \"" + strconv.FormatInt(time.Now().UnixNano(), 10) + "\"\n\nfunc init() { fmt.Println(sort.StringsAreSorted([]string{tag})) }\n")
	a, err := ours.Build(context.Background(), hostileProgram(src))
	if err != nil {
		t.Fatal(err)
	}
	b, err := theirs.Build(context.Background(), hostileProgram(src))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the modules differ: %d bytes with WarmLinker's linker, %d with the toolchain's", len(a), len(b))
	}
}

// While another process builds the linker, a builder links with the
// toolchain's and takes the new one as soon as it is in place.
func TestLinkerBeingBuiltElsewhere(t *testing.T) {
	b, root := toolchainBuilder(t)
	if !hugePagesOnRequest() {
		t.Skip("transparent huge pages are not in madvise mode here: WarmLinker builds nothing")
	}
	dir := filepath.Join(root, "cache")
	file := b.linkerFile(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFile(filepath.Dir(file) + ".lock") // the other process
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	if err := b.WarmLinker(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("WarmLinker waited %v for the other process", d)
	}
	toolchain := filepath.Join(b.toolDir, "link")
	if got := b.linkerPath(); got != toolchain {
		t.Fatalf("while the linker is being built: %s, want the toolchain's", got)
	}
	// The other process puts it in place.
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("#"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := b.linkerPath(); got != file {
		t.Fatalf("once built: %s, want %s", got, file)
	}
	// And should it go away, a build falls back to the toolchain's.
	os.RemoveAll(filepath.Dir(file))
	src := []byte("package main\n\nvar tag = \"" + strconv.FormatInt(time.Now().UnixNano(), 10) + "\"\n")
	if _, err := b.Build(context.Background(), hostileProgram(src)); err != nil {
		t.Fatalf("with the linker gone: %v", err)
	}
	if got := b.linkerPath(); got != toolchain {
		t.Errorf("after the linker went away: %s, want the toolchain's", got)
	}
}

// A linker that could not be built is not tried again by every process
// (it takes half a minute), and the toolchain's links meanwhile.
func TestLinkerBuildFailureRemembered(t *testing.T) {
	b, root := toolchainBuilder(t)
	if !hugePagesOnRequest() {
		t.Skip("transparent huge pages are not in madvise mode here: WarmLinker builds nothing")
	}
	dir := filepath.Join(root, "cache")
	broken, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	broken.goBin = filepath.Join(root, "no-go-here")
	err = broken.WarmLinker(context.Background(), dir, nil)
	if err == nil || !strings.Contains(err.Error(), "not tried again") {
		t.Fatalf("WarmLinker with no go command: %v", err)
	}
	var progress bytes.Buffer
	if err := b.WarmLinker(context.Background(), dir, &progress); err != nil {
		t.Fatalf("after a failure: %v", err)
	}
	if progress.Len() > 0 || b.Linker() != toolchainLinker {
		t.Errorf("after a failure WarmLinker built again (%q) or switched linker (%q)", progress.String(), b.Linker())
	}
	if _, err := os.Stat(filepath.Dir(b.linkerFile(dir))); err == nil {
		t.Error("a linker was put in place after a failure")
	}
}
