package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// A process killed mid-build leaves its folders; a later one removes
// them once they are old enough, and leaves a live process's alone.
func TestSweepDeadFolders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("liveness is checked on Linux only")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	deadPID, livePID := dead.Process.Pid, os.Getppid()
	root := t.TempDir()
	old := time.Now().Add(-2 * staleTempAge)
	mk := func(name string, mtime time.Time) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(d, "m"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "m", "module.wasm"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return d
	}
	gone := []string{
		mk("ctrljudge-build-"+strconv.Itoa(deadPID)+"-1", old),
		mk("ctrljudge-kit-"+strconv.Itoa(deadPID)+"-2", old),
	}
	kept := []string{
		mk("ctrljudge-build-"+strconv.Itoa(livePID)+"-3", old),        // alive
		mk("ctrljudge-build-"+strconv.Itoa(deadPID)+"-4", time.Now()), // too recent
		mk("ctrljudge-build-5", old),                                  // no process in the name
		mk("ctrljudge-other-"+strconv.Itoa(deadPID)+"-6", old),        // not a build folder
	}
	target := mk("elsewhere", old)
	if err := os.Symlink(target, filepath.Join(root, "ctrljudge-build-"+strconv.Itoa(deadPID)+"-7")); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, target)

	sweepDeadFolders(root, staleTempAge)
	for _, d := range gone {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s was left: %v", filepath.Base(d), err)
		}
	}
	for _, d := range kept {
		if _, err := os.Stat(filepath.Join(d, "m", "module.wasm")); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}

// Build folders are named for their process, so the sweep can tell.
func TestBuildFoldersNamedForTheProcess(t *testing.T) {
	d, err := tempDir(t.TempDir(), "build")
	if err != nil {
		t.Fatal(err)
	}
	want := "ctrljudge-build-" + strconv.Itoa(os.Getpid()) + "-"
	if base := filepath.Base(d); len(base) <= len(want) || base[:len(want)] != want {
		t.Errorf("build folder %q, want it to start %q", base, want)
	}
}
