package integration

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"ctrljudge/judge/records"
)

// TestManyLearners: learners submitting at once lose no record. Each of
// them submits several times; a refusal (server busy) is an answer, not a
// loss, and is retried a bounded number of times.
func TestManyLearners(t *testing.T) {
	code := starterCode(t)
	data := t.TempDir()
	s := startServer(t, data, "--queue", "256")
	db, err := records.Open(filepath.Join(data, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const (
		learners   = 24
		rounds     = 3
		maxRetries = 50
		retryWait  = 200 * time.Millisecond
	)
	var mu sync.Mutex
	var ids []int64
	refused := map[int]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range learners {
		l := newLearner(t, s.base)
		mode := "submit"
		if i%3 == 0 {
			mode = "run"
		}
		wg.Go(func() {
			for range rounds {
				var id int64
				for try := 0; id == 0 && try < maxRetries; try++ {
					n, status, err := l.submit(code, mode)
					if err != nil {
						t.Error(err)
						return
					}
					if n == 0 {
						if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
							t.Errorf("submit answered %d", status)
							return
						}
						mu.Lock()
						refused[status]++
						mu.Unlock()
						time.Sleep(retryWait)
						continue
					}
					id = n
				}
				if id == 0 {
					t.Error("a learner was refused too often")
					return
				}
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	got := waitSettled(t, db, ids, s)
	elapsed := time.Since(start)
	s.stop()

	if len(ids) != learners*rounds {
		t.Errorf("%d submissions acknowledged; want %d", len(ids), learners*rounds)
	}
	// Every record of these learners is one the server acknowledged: none
	// lost, none extra.
	ctx := context.Background()
	seen := map[int64]bool{}
	total := 0
	for _, sub := range got {
		if seen[sub.LearnerID] {
			continue
		}
		seen[sub.LearnerID] = true
		all, err := db.Submissions(ctx, sub.LearnerID, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		total += len(all)
	}
	if total != len(ids) || len(seen) != learners {
		t.Errorf("records hold %d submissions of %d learners; acknowledged %d of %d", total, len(seen), len(ids), learners)
	}
	states := map[string]int{}
	for _, sub := range got {
		states[sub.State+"/"+string(sub.Outcome)]++
	}
	t.Logf("%d submissions from %d learners settled in %v; refusals %v; states %v", len(ids), learners, elapsed.Round(time.Millisecond), refused, states)
}
