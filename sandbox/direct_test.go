package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A kit on disk names archives in the Go build cache; should the cache
// lose one (trimmed, cleaned), the next process compiles it again rather
// than failing the learner's build.
func TestKitOnDiskSurvivesALostArchive(t *testing.T) {
	b, root := testBuilder(t)
	state := filepath.Join(root, "state")
	b.StateDir = state
	src := []byte("package main\n\nimport \"strings\"\n\nvar _ = strings.ToUpper\n")
	if _, err := b.Build(context.Background(), hostileProgram(src)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(state, "kit-*.importcfg"))
	if len(files) != 1 {
		t.Fatalf("kits on disk: %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// Point strings at an archive that is not there.
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "packagefile strings=") {
			l = "packagefile strings=" + filepath.Join(root, "gone.a")
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(files[0], []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	next, err := NewBuilder() // another process's
	if err != nil {
		t.Fatal(err)
	}
	next.StateDir = state
	if _, err := next.Build(context.Background(), hostileProgram(src)); err != nil {
		t.Fatalf("with an archive gone from the cache: %v", err)
	}
	data, _ = os.ReadFile(files[0])
	if strings.Contains(string(data), "gone.a") {
		t.Error("the kit on disk still names the lost archive")
	}
}

// A link runs without its collector until it holds the smaller of
// maxLinkHeapBytes and a quarter of its memory limit, so that a link near
// the limit still collects before RLIMIT_DATA stops it.
func TestLinkGCEnv(t *testing.T) {
	for _, c := range []struct {
		lim  BuildLimits
		want string
	}{
		{trustedLimits, "GOMEMLIMIT=536870912"},
		{DefaultBuildLimits(), "GOMEMLIMIT=536870912"},
		{BuildLimits{MemoryBytes: 512 << 20}, "GOMEMLIMIT=134217728"},
	} {
		env := linkGCEnv(c.lim)
		if !slices.Equal(env, []string{"GOGC=off", c.want}) {
			t.Errorf("linkGCEnv(%+v) = %q, want GOGC=off and %s", c.lim, env, c.want)
		}
	}
}
