package judge

import (
	"bytes"
	"testing"
)

// Starting controllers from snapshots of their module's initialisation
// (sandbox/snapshot.go), and compiling only the library functions
// judging calls (sandbox/prune.go), change no verdict: every exercise's solution,
// starter and mutants get byte-identical JSON with both and without.
func TestSnapshotsDoNotChangeVerdicts(t *testing.T) {
	on := engine(t)
	off, err := NewEngine(Options{noSnapshots: true, noPruning: true})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	var cases []judgeable
	for _, ex := range catalog(t).Exercises {
		cases = append(cases, judgeable{ex, "solution", ex.Solution}, judgeable{ex, "starter", ex.Starter})
		for _, m := range ex.Mutants {
			cases = append(cases, judgeable{ex, "mutant " + m.Name, m.Code})
		}
	}
	a, b := judgeAll(on, cases), judgeAll(off, cases)
	for i, c := range cases {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("%s %s: verdicts differ\nwith snapshots:    %s\nwithout snapshots: %s", c.ex.Slug, c.what, a[i], b[i])
		}
	}
	if n := on.rt.SnapshotStarts(); n == 0 {
		t.Error("no controller started from a snapshot")
	}
	if n := off.rt.SnapshotStarts(); n != 0 {
		t.Errorf("%d controllers started from a snapshot without snapshots", n)
	}
	t.Logf("%d submissions judged alike; %d controllers started from a snapshot", len(cases), on.rt.SnapshotStarts())
}
