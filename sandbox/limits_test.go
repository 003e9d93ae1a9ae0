package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Each testdata/limits fixture sits just under or just over a limit that
// is checked on the source, and is built under the default limits: a
// verdict the source decides is the same every run, on an idle machine
// or a loaded one. CTRLJUDGE_EDGE_RUNS=20 builds each that many times
// (RATIONALE.md, "Why are builds refused on their source?").
func TestSourceLimitEdges(t *testing.T) {
	files, _ := filepath.Glob("testdata/limits/*.txtar")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	runs := 1
	if s := os.Getenv("CTRLJUDGE_EDGE_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CTRLJUDGE_EDGE_RUNS=%q", s)
		}
		runs = n
	}
	b, _ := testBuilder(t)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			src, wants := readFixture(t, f)
			// A new comment each run, so that nothing of an earlier run's
			// is reused (the builder caches nothing, but the Go cache is
			// shared).
			for i := range runs {
				s := append(src[:len(src):len(src)], fmt.Sprintf("\n// run %d %d\n", i, time.Now().UnixNano())...)
				start := time.Now()
				res, err := b.buildIn(context.Background(), hostileProgram(s), DefaultBuildLimits(), t.TempDir())
				t.Logf("run %d: %v wall, %v CPU, %d MiB peak RSS: %v", i+1, time.Since(start).Round(time.Millisecond), res.cpu.Round(time.Millisecond), res.maxRSS>>20, firstLines(errString(err), 1))
				checkVerdict(t, err, wants)
			}
		})
	}
}

// The figures the limits measure, on what a reader would count by hand.
func TestSourceFigures(t *testing.T) {
	for _, c := range []struct {
		name, src         string
		strings, literals int64
		weight            int
	}{
		{"literal", `const a = "abc"`, 3, 0, 0},
		{"sum and use", "const a = \"ab\"\nconst b = a + a + \"c\"\nvar x = b", 2 + 5 + 5, 0, 0},
		// An implicit value repeats the one before: b and c are a+a too.
		{"repeated", "const a = \"ab\"\nconst (\n\tb = a + a\n\tc\n\td\n)", 2 + 4*3, 0, 0},
		// A name stands for its longest constant: a use of the local b is
		// counted as the package's.
		{"shadowed", "const b = \"abcd\"\nfunc f() string { const b = \"x\"; return b }", 4 + 1 + 4, 0, 0},
		{"len", "const a = \"abc\"\nconst n = len(a)", 3 + 3, 0, 0},
		{"field name", "const a = \"abc\"\ntype T struct{ a int }\nfunc (t T) f() int { return t.a }", 3, 0, 0},
		{"array", "var a = [1000]int32{}", 0, 4000, 0},
		{"slice by highest index", "var s = []int64{10: 1, 2}", 0, 12 * 8, 0},
		// The inner arrays are stored in the outer one; the slices' backing
		// arrays are not.
		{"nested", "var a = [2][3]int64{{1}, {2}}\nvar s = [1][]int8{{1, 2, 3}}", 0, 48 + 24 + 3, 0}, // a slice header is 24 bytes
		{"generic", "func g[T any]() {}\nfunc init() { g[int](); g[string](); g[int]() }", 0, 0, 2 * 9},
		{"generic method", "type L[T any] struct{ v T }\nfunc (l *L[T]) Get() T { return l.v }\nvar x L[int]", 0, 0, 30}, // the type and its method
	} {
		t.Run(c.name, func(t *testing.T) {
			p := hostileProgram([]byte("package main\n\n" + c.src + "\n"))
			diags, fig := measureSource(p, otherGoFiles(p, nil), nil)
			if diags != nil || fig.typeErrors {
				t.Fatalf("refused or not type checked: %v, %+v", diags, fig)
			}
			if fig.strings != c.strings || fig.literals != c.literals || fig.instanceWeight != c.weight {
				t.Errorf("strings %d, literals %d, weight %d; want %d, %d, %d", fig.strings, fig.literals, fig.instanceWeight, c.strings, c.literals, c.weight)
			}
		})
	}
}

// Strings are bounded before go/types runs: it spells a constant out
// whole for len, and a doubling chain 70 steps long would need more
// memory than there is. Measured from the syntax, it is refused at once.
func TestSourceLimitsNeverSpellStringsOut(t *testing.T) {
	var b strings.Builder
	b.WriteString("package main\n\nconst s0 = \"xxxxxxxxxxxxxxxx\"\n")
	for i := 1; i <= 70; i++ {
		fmt.Fprintf(&b, "const s%d = s%d + s%d\n", i, i-1, i-1)
	}
	b.WriteString("const n = len(s70)\n")
	start := time.Now()
	diags := checkSource(hostileProgram([]byte(b.String())), nil, nil)
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "learner.go:22:7: this constant string is 8.0 MiB long") {
		t.Errorf("got %v", diags)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the check took %v", d)
	}
}
