package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/queue"
	"ctrljudge/judge/records"
	"ctrljudge/judge/records/pgtest"
	"ctrljudge/judge/verdict"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// TestOnPostgres runs the server's judging tests again with the records
// and the queue on PostgreSQL: the server's own worker claims River jobs,
// and the progress it reports comes back through judge_events. The
// stream, the stored verdict, the retry of a judgement cut short and the
// per-learner limit are the same as on SQLite.
func TestOnPostgres(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"SubmitStreamsProgress", TestSubmitStreamsProgress},
		{"StreamResumesAfterLastEventID", TestStreamResumesAfterLastEventID},
		{"PendingPerLearner", TestPendingPerLearner},
		{"JudgePanic", TestJudgePanic},
		{"RunOnlyOneTest", TestRunOnlyOneTest},
		{"ShutdownWaitsForJudgements", TestShutdownWaitsForJudgements},
		{"NotJudgedIsRetriedNotCharged", TestNotJudgedIsRetriedNotCharged},
		{"RecoverUnfinished", TestRecoverUnfinished},
	} {
		t.Run(c.name+"/postgres", c.fn)
	}
}

// TestWorkerElsewhere: a server that judges nothing itself and a worker
// with its own connection, as on another host: the learner's stream shows
// the worker's progress, the verdict is stored once, /healthz and
// /metrics count the worker; a draining worker hands its judgement back,
// and another worker finishes it.
func TestWorkerElsewhere(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		env := newEnv(t, Config{JudgeElsewhere: true}, nil)
		ctx := context.Background()
		startWorker := func(fake *fakeJudge) *queue.Worker {
			t.Helper()
			db, err := records.Open(env.db.Path())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			w, err := queue.NewWorker(queue.WorkerConfig{DB: db, Catalog: env.cat, Engine: fake, Slots: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Stop(time.Second) })
			return w
		}
		// No worker in the server: none is alive before the first starts.
		if h := env.client().get("/healthz"); !strings.Contains(h.body, `"workers":0`) {
			t.Errorf("healthz before any worker: %s", h.body)
		}
		first := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 8)}
		w1 := startWorker(first)
		c := env.client()
		sr := c.submit("171", "submit", "package main // fails")
		<-first.started
		stream := c.open(sr.Events, nil)
		if h := c.get("/healthz"); !strings.Contains(h.body, `"workers":1`) {
			t.Errorf("healthz with one worker: %s", h.body)
		}
		close(first.hold)
		evs := c.read(stream)
		want := "queued compiling running test running test done"
		if got := strings.Join(names(evs), " "); got != want {
			t.Errorf("events %s, want %s", got, want)
		}
		if h, _ := evs[4].Data["html"].(string); !strings.Contains(evs[5].Data["html"].(string), "Convergence") {
			t.Errorf("the failing card lacks its oracle: %.200s", h)
		}
		s, err := env.db.Submission(ctx, sr.ID)
		if err != nil || s.State != records.StateDone || s.Outcome != verdict.OutcomeWrongAnswer || first.calls != 1 {
			t.Fatalf("stored %+v, %v; judged %d times", s, err, first.calls)
		}
		// The server's metrics, read where `judge serve --metrics-addr` serves them.
		rec := httptest.NewRecorder()
		env.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		m := rec.Body.String()
		for _, w := range []string{"ctrljudge_queue_depth 0", "ctrljudge_workers_alive 1"} {
			if !strings.Contains(m, w) {
				t.Errorf("metrics lack %q: %.300s", w, m)
			}
		}

		// Drain: the held judgement goes back to the queue, uncharged.
		first.hold = make(chan struct{})
		sr = c.submit("171", "submit", "package main "+solvedMarker)
		<-first.started
		stream = c.open(sr.Events, nil)
		if err := w1.Stop(100 * time.Millisecond); err != nil {
			t.Logf("stop: %v", err)
		}
		if first.canceled != 1 {
			t.Errorf("drain cancelled %d judgements, want 1", first.canceled)
		}
		if s, _ := env.db.Submission(ctx, sr.ID); s.State != records.StateRunning {
			t.Errorf("handed-back submission is %s", s.State)
		}
		second := &fakeJudge{}
		startWorker(second)
		evs = c.read(stream)
		if last := evs[len(evs)-1]; last.Name != "done" || last.Data["outcome"] != string(verdict.OutcomeAccepted) {
			t.Errorf("after the hand-back: %v %v", names(evs), last.Data)
		}
		if second.calls != 1 {
			t.Errorf("the second worker judged %d times, want 1", second.calls)
		}
	})
}
