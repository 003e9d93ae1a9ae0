package judge

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// memPeak samples the heap while f runs: the most in use (HeapInuse) and
// the most live as of a collection, less what was in use before (after a
// collection: cached modules, earlier tests), and what f allocated in all.
type memPeak struct{ inuse, live, total uint64 }

func measure(f func()) memPeak {
	var p memPeak
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	baseLive := live[0].Value.Uint64()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			metrics.Read(live)
			p.inuse = max(p.inuse, m.HeapInuse)
			p.live = max(p.live, live[0].Value.Uint64())
			select {
			case <-stop:
				p.total = m.TotalAlloc - before.TotalAlloc
				p.inuse -= min(p.inuse, before.HeapInuse)
				p.live -= min(p.live, baseLive)
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return p
}

func fixtureCode(t *testing.T, name string) []byte {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "learner", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name != "want" {
			return f.Data
		}
	}
	t.Fatal("no code in " + name)
	return nil
}

// Hostile controllers, judged in full (every test, faults and shrinking
// included): the verdict stays within maxVerdictBytes, says what it cut,
// is a learner's verdict, and the judge's heap stays small throughout.
func TestHostileSubmissionsStayBounded(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	for _, name := range []string{"error-flood", "huge-configmaps"} {
		t.Run(name, func(t *testing.T) {
			code := fixtureCode(t, name)
			var v *verdict.Verdict
			p := measure(func() {
				v = eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, FileName: "my-file.go", Seed: 1})
			})
			b, _ := json.Marshal(v)
			t.Logf("%s: %d tests, verdict %d bytes, truncated %v; heap in use grew by at most %d MiB, live heap by %d MiB; %d MiB allocated in all",
				v.Outcome, len(v.Tests), len(b), v.Truncated, p.inuse>>20, p.live>>20, p.total>>20)
			if v.Outcome != verdict.OutcomeWrongAnswer || v.Failed != len(ex.Suite.Tests)+ex.GeneratedTests() {
				t.Fatalf("outcome %s, %d of %d failed: %s", v.Outcome, v.Failed, len(v.Tests), v.Summary())
			}
			if len(b) > text.MaxVerdictBytes {
				t.Errorf("verdict of %d bytes, over %d", len(b), text.MaxVerdictBytes)
			}
			// Live is what the judgement holds: the module compiled for the
			// interpreter (about 45 MiB), the instances' memories and the
			// judge's own. In use is about twice that, the collector's
			// slack at the default GOGC.
			if p.live > 256<<20 || p.inuse > 512<<20 {
				t.Errorf("while judging, the live heap grew by %d MiB, the heap in use by %d MiB", p.live>>20, p.inuse>>20)
			}
			for _, tr := range v.Tests {
				for _, l := range tr.Trace {
					if len(l.Event) > text.MaxTraceEvent+32 {
						t.Fatalf("a trace line of %d bytes", len(l.Event))
					}
				}
				if len(tr.Message) > text.MaxMessageBytes+32 {
					t.Fatalf("a message of %d bytes", len(tr.Message))
				}
			}
			if name == "error-flood" {
				// 16 KiB of output and a trace per test: too much for one
				// verdict, so the later tests lose theirs, and it says so.
				// (The last few, past the submission's budget of steps,
				// were not run and have nothing to lose.)
				ran := slices.DeleteFunc(slices.Clone(v.Tests), func(r verdict.TestResult) bool { return strings.HasPrefix(r.Message, "Not run:") })
				first, last := ran[0], ran[len(ran)-1]
				if !v.Truncated || !strings.Contains(v.Cut, "256 KiB") || len(first.Trace) == 0 || first.Cut != "" ||
					last.Cut == "" || len(last.Trace) != 0 || last.Output != "" {
					t.Fatalf("truncated %v (%q); first test: %d trace lines, cut %q; last: %d trace lines, cut %q",
						v.Truncated, v.Cut, len(first.Trace), first.Cut, len(last.Trace), last.Cut)
				}
			}
		})
	}
}
