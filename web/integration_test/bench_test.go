package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"ctrljudge/judge/records"
	"ctrljudge/judge/records/pgtest"
)

// benchSubmissions is how many submissions one round of BenchmarkWorkers
// judges: each a distinct file, so each is built as well as run, as a
// class's submissions are.
const benchSubmissions = 24

// BenchmarkWorkers measures verdicts per second with 1, 2 and 4 `judge
// worker` processes (one judgement at a time each) behind one server on
// one PostgreSQL, and per core in use (the machine's cores, or fewer
// when there are fewer workers):
//
//	go test -run '^$' -bench Workers -benchtime 1x ./web/integration_test/
func BenchmarkWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			dbURL := pgtest.URL(b)
			srvAddr := freePort(b)
			srv := startProc(b, srvAddr, "serve", "--addr", srvAddr, "--metrics-addr", "", "--data", b.TempDir(), "--db", dbURL, "-judge=false", "--queue", "256")
			for range n {
				startWorker(b, dbURL, 1)
			}
			db, err := records.Open(dbURL)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			code := starterCode(b)
			var total time.Duration
			judged := 0
			for round := range b.N {
				var mu sync.Mutex
				var ids []int64
				var wg sync.WaitGroup
				start := time.Now()
				for i := range benchSubmissions {
					l := newLearner(b, srv.base)
					wg.Go(func() {
						id, status, err := l.submit(fmt.Sprintf("%s\n// learner %d, round %d\n", code, i, round), "submit")
						if err != nil || status != http.StatusAccepted {
							b.Errorf("submit: %d %v", status, err)
							return
						}
						mu.Lock()
						ids = append(ids, id)
						mu.Unlock()
					})
				}
				wg.Wait()
				got := waitSettled(b, db, ids, &server{log: &bytes.Buffer{}})
				total += time.Since(start)
				for _, s := range got {
					if s.State != records.StateDone {
						b.Errorf("submission %d: %s %s", s.ID, s.State, s.Note)
					}
				}
				judged += len(got)
			}
			vps := float64(judged) / total.Seconds()
			b.ReportMetric(vps, "verdicts/s")
			b.ReportMetric(vps/float64(min(n, runtime.NumCPU())), "verdicts/s/core")
			b.ReportMetric(0, "ns/op")
		})
	}
}
