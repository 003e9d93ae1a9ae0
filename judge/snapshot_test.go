package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"ctrljudge/judge/verdict"
)

// Starting controllers from snapshots of their module's initialisation
// (sandbox/snapshot.go), and compiling only the runtime functions judging
// calls (sandbox/prune.go), change no verdict: every exercise's solution,
// starter and mutants get byte-identical JSON with both and without.
func TestSnapshotsDoNotChangeVerdicts(t *testing.T) {
	on := engine(t)
	off, err := NewEngine(Options{noSnapshots: true, noPruning: true})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	type kase struct {
		ex   *Exercise
		what string
		code []byte
	}
	var cases []kase
	for _, ex := range catalog(t).Exercises {
		cases = append(cases, kase{ex, "solution", ex.Solution}, kase{ex, "starter", ex.Starter})
		for _, m := range ex.Mutants {
			cases = append(cases, kase{ex, "mutant " + m.Name, m.Code})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := Submission{Exercise: c.ex, Code: c.code, Mode: verdict.ModeSubmit}
			a, _ := json.Marshal(on.Judge(context.Background(), s))
			b, _ := json.Marshal(off.Judge(context.Background(), s))
			if !bytes.Equal(a, b) {
				t.Errorf("%s %s: verdicts differ\nwith snapshots:    %s\nwithout snapshots: %s", c.ex.Slug, c.what, a, b)
			}
		}()
	}
	wg.Wait()
	if n := on.rt.SnapshotStarts(); n == 0 {
		t.Error("no controller started from a snapshot")
	}
	if n := off.rt.SnapshotStarts(); n != 0 {
		t.Errorf("%d controllers started from a snapshot without snapshots", n)
	}
	t.Logf("%d submissions judged alike; %d controllers started from a snapshot", len(cases), on.rt.SnapshotStarts())
}
