package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"ctrljudge/internal/hugeheap"
)

// The linker of a learner's build. A link lays out the whole Go runtime
// whatever the learner wrote, and its heap grows from nothing to some
// 30 MB in a fifth of a second: a page fault for each 4 KiB page (87 % of
// a link's 7,800 faults here), and on a virtual machine a fault costs
// microseconds (RATIONALE.md, "The linker's heap in huge pages").
// Transparent huge pages would take one fault for each 2 MiB, but in the
// kernel's madvise mode (many distributions' default) only memory that
// asks gets them, and Go's runtime asks for none. So where the mode is
// madvise, WarmLinker builds the toolchain's own linker from its own
// source with one file added: an initialiser that takes 64 MiB of fresh
// heap, marks it for huge pages and frees it, so that the link's heap
// then grows into that memory. The modules it writes are byte for byte
// the toolchain linker's (TestLinkerWritesTheSameModule). In always mode
// every heap has huge pages already, in never mode none can; either way
// nothing is built and the toolchain's linker links.

// maxLinkerBuildWall is the net over building the linker: about half a
// minute of CPU on two cores, once per Go version.
const maxLinkerBuildWall = 10 * time.Minute

// linkerInit is the file added to cmd/link: hugeheap.Warm, run before the
// linker's main, when the heap is nearly empty.
var linkerInit = hugeheap.MainFile()

// hugePagesOnRequest reports whether the kernel gives transparent huge
// pages only to memory that asks for them.
func hugePagesOnRequest() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(mode, []byte("[madvise]"))
}

// linkerPath is the linker a learner's build runs: WarmLinker's, once
// it is there (another process may still be building it).
func (b *Builder) linkerPath() string {
	if p := b.linker.Load(); p != nil {
		return *p
	}
	if p := b.linkerSoon.Load(); p != nil {
		if _, err := os.Stat(*p); err == nil {
			b.linker.Store(p)
			return *p
		}
	}
	return filepath.Join(b.toolDir, "link")
}

// Linker names the linker learners' builds run.
func (b *Builder) Linker() string {
	if b.linker.Load() != nil {
		return hugeHeapLinker
	}
	return toolchainLinker
}

const (
	toolchainLinker = "the toolchain's linker"
	hugeHeapLinker  = "the toolchain's linker, its heap in huge pages"
)

// WarmLinker makes learners' builds link with the toolchain's linker
// built with its heap in huge pages, when the kernel gives huge pages only
// on request. The linker is built once per Go toolchain into dir, where
// later processes find it; while one process builds it, others link with
// the toolchain's linker and take the new one when it is there. On a cold
// build it writes a line to progress when it starts and one when it is
// done; progress may be nil. An error leaves the toolchain's linker in
// use, and a failed build is not tried again for this toolchain.
func (b *Builder) WarmLinker(ctx context.Context, dir string, progress io.Writer) error {
	if b.toolDir == "" || dir == "" || !hugePagesOnRequest() {
		return nil
	}
	file := b.linkerFile(dir)
	// Checked before it was put there: a stat is enough. A build that
	// failed is not tried again by every process.
	if _, err := os.Stat(file); err == nil {
		b.linker.Store(&file)
		return nil
	}
	if _, err := os.Stat(filepath.Dir(file) + ".failed"); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Dir(file) + ".lock")
	if errors.Is(err, errLocked) {
		// Another process is building it: link with the toolchain's
		// linker until it is there, rather than wait.
		b.linkerSoon.Store(&file)
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(file); err == nil { // built by another process meanwhile
		b.linker.Store(&file)
		return nil
	}
	// Holding the lock, nothing else builds here: whatever a build killed
	// midway left is in the way.
	os.RemoveAll(filepath.Dir(file))
	if stale, err := filepath.Glob(filepath.Join(dir, ".link-*")); err == nil {
		for _, f := range stale {
			os.RemoveAll(f)
		}
	}
	if progress != nil {
		fmt.Fprintln(progress, "Building the linker for learners' modules (once per Go version; about half a minute)…")
	}
	start := time.Now()
	cpu, err := b.buildLinker(ctx, file)
	if err != nil {
		if ctx.Err() == nil {
			failed := filepath.Dir(file) + ".failed"
			os.WriteFile(failed, []byte(err.Error()+"\n"), 0o600)
			err = fmt.Errorf("%w (not tried again for this Go toolchain while %s exists)", err, failed)
		}
		return err
	}
	if progress != nil {
		fmt.Fprintf(progress, "Built the linker in %v (%v of CPU).\n", time.Since(start).Round(100*time.Millisecond), cpu.Round(100*time.Millisecond))
	}
	b.linker.Store(&file)
	return nil
}

// linkerFile is where WarmLinker keeps this toolchain's linker in dir:
// named link, in a folder of its own, since a tool names itself after its
// file (in its -V line, in its messages).
func (b *Builder) linkerFile(dir string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q %q\n", b.goVersion, b.goroot, b.toolDir, runtime.GOOS, runtime.GOARCH, linkerInit)
	return filepath.Join(dir, "link-"+hex.EncodeToString(h.Sum(nil))[:16], "link")
}

// buildLinker builds cmd/link with linkerInit added, into file.
func (b *Builder) buildLinker(ctx context.Context, file string) (time.Duration, error) {
	tmp, err := tempDir("", "linker")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "init.go")
	if err := os.WriteFile(src, []byte(linkerInit), 0o600); err != nil {
		return 0, err
	}
	// An overlay adds the file to the package without touching GOROOT.
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(b.goroot, "src", "cmd", "link", "zz_ctrljudge_init.go"): src,
	}})
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		return 0, err
	}
	outDir, err := os.MkdirTemp(filepath.Dir(filepath.Dir(file)), ".link-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(outDir)
	out := filepath.Join(outDir, "link")
	// For the host, from the toolchain's own module and vendored packages.
	env := []string{"GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH, "GOFLAGS="}
	args := []string{"build", "-trimpath", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", out, "cmd/link"}
	r := b.runTool(ctx, tmp, tmp, b.goBin, args, BuildLimits{Wall: maxLinkerBuildWall}, nil, nil, env)
	if r.err != nil {
		return r.cpu, fmt.Errorf("sandbox: building the linker: %v: %s", r.err, firstLines(strings.ReplaceAll(r.stderr, tmp, "."), 20))
	}
	if !b.linkerWorks(ctx, out) {
		return r.cpu, errors.New("sandbox: the linker built does not report the toolchain's version")
	}
	if err := os.Chmod(outDir, 0o700); err != nil {
		return r.cpu, err
	}
	return r.cpu, os.Rename(outDir, filepath.Dir(file))
}

// linkerWorks reports whether file is a linker of this toolchain's
// version.
func (b *Builder) linkerWorks(ctx context.Context, file string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, file, "-V").Output()
	return err == nil && strings.TrimSpace(string(out)) == "link version "+b.goVersion
}

// linkFailedToStart reports whether err is a linker that could not be
// started at all (removed or damaged since it was checked, say).
func linkFailedToStart(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe)
}
