package integration

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"ctrljudge/judge/records"
)

// TestCrashRecovery kills the server (SIGKILL) with submissions in flight,
// starts it again on the same records, and finds every acknowledged
// submission judged or marked not judged (with a reason), none lost.
func TestCrashRecovery(t *testing.T) {
	code := starterCode(t)
	data := t.TempDir()
	s := startServer(t, data)

	const learners = 12
	var mu sync.Mutex
	var ids []int64
	var wg sync.WaitGroup
	for range learners {
		l := newLearner(t, s.base)
		wg.Go(func() {
			id, status, err := l.submit(code, "submit")
			if err != nil {
				t.Error(err)
				return
			}
			if id == 0 {
				t.Errorf("submit refused with %d", status)
				return
			}
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
		})
	}
	wg.Wait()
	s.kill()

	db, err := records.Open(filepath.Join(data, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	un, err := db.Unfinished(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged, %d unfinished when killed", len(ids), len(un))
	if len(un) == 0 {
		t.Log("nothing was in flight at the kill: judging was faster than submitting; recovery is not exercised this run")
	}

	s2 := startServer(t, data)
	got := waitSettled(t, db, ids, s2)
	s2.stop()
	done, notJudged := 0, 0
	for _, id := range ids {
		switch sub := got[id]; sub.State {
		case records.StateDone:
			done++
		case records.StateNotJudged:
			notJudged++
			if sub.Note == "" {
				t.Errorf("submission %d not judged without a reason", id)
			}
		default:
			t.Errorf("submission %d ended %s", id, sub.State)
		}
	}
	t.Logf("after restart: %d judged, %d not judged", done, notJudged)
}
