package records

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ctrljudge/judge/records/pgtest"
	"ctrljudge/judge/verdict"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// both runs fn once on each database: openTest in it opens that one.
func both(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	t.Run("sqlite", fn)
	t.Run("postgres", fn)
}

func onPostgres(t *testing.T) bool { return strings.Contains(t.Name(), "/postgres") }

// openTest opens an empty database: a SQLite file, or a new PostgreSQL
// database under both's postgres run.
func openTest(t *testing.T) *DB {
	t.Helper()
	target := filepath.Join(t.TempDir(), "records?#.db")
	if onPostgres(t) {
		target = pgtest.URL(t)
	}
	db, err := Open(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newVerdict(outcome verdict.Outcome, tests ...verdict.TestResult) *verdict.Verdict {
	v := &verdict.Verdict{Version: 3, Outcome: outcome, Exercise: "reconcile-loop", ExerciseVersion: "abc123", Engine: "ctrljudge-test", Seed: 7, Tests: tests}
	for _, t := range tests {
		if t.Status == verdict.StatusPass {
			v.Passed++
		} else {
			v.Failed++
		}
	}
	return v
}

func submit(t *testing.T, db *DB, learner int64, mode verdict.Mode, code string, v *verdict.Verdict) *Submission {
	t.Helper()
	ctx := context.Background()
	s := &Submission{LearnerID: learner, Exercise: "reconcile-loop", Mode: mode, Code: code}
	if err := db.CreateSubmission(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := db.StartSubmission(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := db.FinishSubmission(ctx, s.ID, v, 12); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestMigrationsIdempotentOnReopen(t *testing.T) {
	both(t, func(t *testing.T) { testMigrationsIdempotentOnReopen(t) })
}

func testMigrationsIdempotentOnReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	if onPostgres(t) {
		path = pgtest.URL(t)
	}
	ctx := context.Background()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := db.NewAnonymousLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := db.SchemaVersion(ctx)
	db.Close()
	for range 2 {
		db, err = Open(path)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		got, _ := db.SchemaVersion(ctx)
		if got != want || got == 0 {
			t.Errorf("schema version %d after reopen; want %d", got, want)
		}
		if _, err := db.Learner(ctx, l.ID); err != nil {
			t.Errorf("learner lost on reopen: %v", err)
		}
		db.Close()
	}
}

func TestPragmas(t *testing.T) {
	db := openTest(t)
	for _, c := range []struct {
		pragma, want string
	}{{"journal_mode", "wal"}, {"foreign_keys", "1"}, {"busy_timeout", "10000"}} {
		var got string
		if err := db.w.QueryRow("PRAGMA " + c.pragma).Scan(&got); err != nil || got != c.want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", c.pragma, got, err, c.want)
		}
	}
	if _, err := db.r.Exec("INSERT INTO learners(name, created_at) VALUES ('x', 1)"); err == nil {
		t.Error("read pool accepted a write")
	}
}

func TestSessions(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		anon, tok, err := db.NewAnonymousLearner(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.LearnerBySession(ctx, tok)
		if err != nil || got.ID != anon.ID || got.Name != "" || got.ClassID != 0 {
			t.Fatalf("LearnerBySession = %+v, %v; want anonymous learner %d", got, err, anon.ID)
		}
		if _, err := db.LearnerBySession(ctx, tok+"x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("wrong token: err %v; want ErrNotFound", err)
		}
		var stored int
		db.r.QueryRow("SELECT count(*) FROM sessions WHERE token_hash = ?", tok).Scan(&stored)
		if stored != 0 {
			t.Error("token stored in the clear")
		}

		in, err := db.AddInstructor(ctx, "Ada", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.CreateClass(ctx, in.ID, "Ops 101")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.SignInLearner(ctx, "Bo", "NOPE-NOPE"); !errors.Is(err, ErrBadJoinCode) {
			t.Errorf("bad join code: err %v; want ErrBadJoinCode", err)
		}
		if _, _, err := db.SignInLearner(ctx, " \x07 ", c.JoinCode); !errors.Is(err, ErrBadName) {
			t.Errorf("control character name: err %v; want ErrBadName", err)
		}
		l1, tok1, err := db.SignInLearner(ctx, " Bo ", c.JoinCode[:4]+"-"+c.JoinCode[4:])
		if err != nil {
			t.Fatal(err)
		}
		l2, tok2, err := db.SignInLearner(ctx, "Bo", c.JoinCode)
		if err != nil {
			t.Fatal(err)
		}
		if l1.ID != l2.ID || l1.Name != "Bo" || l1.ClassID != c.ID || tok1 == tok2 {
			t.Errorf("signing in twice: %+v %+v; want one learner Bo in class %d, two sessions", l1, l2, c.ID)
		}
		if err := db.EndSession(ctx, tok1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.LearnerBySession(ctx, tok1); !errors.Is(err, ErrNotFound) {
			t.Errorf("ended session still valid: %v", err)
		}
		if _, err := db.LearnerBySession(ctx, tok2); err != nil {
			t.Errorf("other session ended too: %v", err)
		}
		now = now.Add(learnerSessionTTL + time.Second)
		if _, err := db.LearnerBySession(ctx, tok2); !errors.Is(err, ErrNotFound) {
			t.Errorf("expired session still valid: %v", err)
		}

		if _, _, err := db.SignInInstructor(ctx, "Ada", "wrong password!"); !errors.Is(err, ErrBadPassword) {
			t.Errorf("wrong password: %v", err)
		}
		if _, _, err := db.SignInInstructor(ctx, "Nobody", "correct horse battery"); !errors.Is(err, ErrBadPassword) {
			t.Errorf("unknown instructor: %v", err)
		}
		_, itok, err := db.SignInInstructor(ctx, "Ada", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := db.InstructorBySession(ctx, itok); err != nil || got.ID != in.ID {
			t.Errorf("InstructorBySession = %+v, %v", got, err)
		}
		if _, err := db.LearnerBySession(ctx, itok); !errors.Is(err, ErrNotFound) {
			t.Errorf("an instructor token signs in a learner: %v", err)
		}
		if _, err := db.AddInstructor(ctx, "Ada", "another long password"); err == nil {
			t.Error("second instructor named Ada accepted")
		}
		if _, err := db.AddInstructor(ctx, "Cy", "short"); err == nil {
			t.Error("short password accepted")
		}
	})
}

func TestProgressNeverDowngrades(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		l, _, _ := db.NewAnonymousLearner(ctx)
		pass := verdict.TestResult{Name: "a", Status: verdict.StatusPass}
		fail := verdict.TestResult{Name: "a", Status: verdict.StatusFail, Oracle: "convergence"}
		steps := []struct {
			mode    verdict.Mode
			outcome verdict.Outcome
			test    verdict.TestResult
			want    string
		}{
			{"run", verdict.OutcomeInternalError, fail, ""}, // not charged: no progress
			{"run", verdict.OutcomeAccepted, pass, "tried"}, // run never solves
			{"submit", verdict.OutcomeWrongAnswer, fail, "tried"},
			{"submit", verdict.OutcomeAccepted, pass, "solved"},
			{"submit", verdict.OutcomeWrongAnswer, fail, "solved"},
			{"run", verdict.OutcomeCompileError, fail, "solved"},
		}
		for i, s := range steps {
			submit(t, db, l.ID, s.mode, fmt.Sprint("code", i), newVerdict(s.outcome, s.test))
			p, err := db.Progress(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p["reconcile-loop"] != s.want {
				t.Errorf("after %s %s: progress %q; want %q", s.mode, s.outcome, p["reconcile-loop"], s.want)
			}
		}
	})
}

func TestSubmissionLifecycle(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		l, _, _ := db.NewAnonymousLearner(ctx)
		v := newVerdict(verdict.OutcomeWrongAnswer,
			verdict.TestResult{Name: "scale-up", Status: verdict.StatusPass},
			verdict.TestResult{Name: "restart", Status: verdict.StatusFail, Oracle: "idempotency", FaultClasses: []verdict.Fault{"restart", "crash-after-write"}})
		s := submit(t, db, l.ID, "submit", "package x\n", v)
		got, err := db.Submission(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != StateDone || got.Outcome != verdict.OutcomeWrongAnswer || got.Passed != 1 || got.Total != 2 ||
			got.ExerciseVersion != "abc123" || got.Engine != "ctrljudge-test" || got.Seed != 7 || got.CodeHash != CodeHash("package x\n") ||
			got.QueuedAt.IsZero() || got.StartedAt.IsZero() || got.FinishedAt.IsZero() || got.DurationMs != 12 || len(got.Verdict) == 0 {
			t.Errorf("stored submission %+v", got)
		}
		if err := db.FinishSubmission(ctx, s.ID, v, 1); !errors.Is(err, ErrState) {
			t.Errorf("finishing twice: %v; want ErrState", err)
		}
		if err := db.AbandonSubmission(ctx, s.ID, "x"); !errors.Is(err, ErrState) {
			t.Errorf("abandoning a done submission: %v; want ErrState", err)
		}
		if err := db.StartSubmission(ctx, 9999); !errors.Is(err, ErrNotFound) {
			t.Errorf("starting a missing submission: %v; want ErrNotFound", err)
		}
		if err := db.CreateSubmission(ctx, &Submission{LearnerID: l.ID, Exercise: "x", Mode: "debug"}); err == nil {
			t.Error("mode debug accepted")
		}
		if err := db.CreateSubmission(ctx, &Submission{LearnerID: 12345, Exercise: "x", Mode: "run"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown learner: %v; want ErrNotFound", err)
		}
		var rows, faults int
		db.r.QueryRow("SELECT count(*) FROM test_results WHERE submission_id = ?", s.ID).Scan(&rows)
		db.r.QueryRow("SELECT count(*) FROM test_fault_classes WHERE submission_id = ?", s.ID).Scan(&faults)
		if rows != 2 || faults != 2 {
			t.Errorf("%d test rows, %d fault rows; want 2, 2", rows, faults)
		}
		list, err := db.Submissions(ctx, l.ID, "reconcile-loop", 0)
		if err != nil || len(list) != 1 || list[0].ID != s.ID {
			t.Errorf("Submissions = %v, %v", list, err)
		}
	})
}

func TestUnfinished(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		l, _, _ := db.NewAnonymousLearner(ctx)
		done := submit(t, db, l.ID, "run", "a", newVerdict(verdict.OutcomeAccepted))
		running := submit(t, db, l.ID, "submit", "b", nil)
		queued := &Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Mode: "submit", Code: "c"}
		if err := db.CreateSubmission(ctx, queued); err != nil {
			t.Fatal(err)
		}
		abandoned := submit(t, db, l.ID, "submit", "d", nil)
		if err := db.AbandonSubmission(ctx, abandoned.ID, "not judged (server restarted)"); err != nil {
			t.Fatal(err)
		}
		un, err := db.Unfinished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(un) != 2 || un[0].ID != running.ID || un[0].State != StateRunning || un[1].ID != queued.ID || un[1].State != StateQueued {
			t.Errorf("Unfinished = %+v; want running %d then queued %d (not done %d)", un, running.ID, queued.ID, done.ID)
		}
		a, _ := db.Submission(ctx, abandoned.ID)
		if a.State != StateNotJudged || a.Note != "not judged (server restarted)" || a.Charged() {
			t.Errorf("abandoned submission %+v", a)
		}
		if p, _ := db.Progress(ctx, l.ID); p["reconcile-loop"] != "tried" {
			t.Errorf("progress %v", p)
		}
	})
}

func TestDrafts(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		l, _, _ := db.NewAnonymousLearner(ctx)
		if _, ok, err := db.Draft(ctx, l.ID, "x"); ok || err != nil {
			t.Errorf("Draft before saving: ok %v, err %v", ok, err)
		}
		for _, code := range []string{"one", "two"} {
			if err := db.SaveDraft(ctx, l.ID, "x", code); err != nil {
				t.Fatal(err)
			}
		}
		if code, ok, err := db.Draft(ctx, l.ID, "x"); code != "two" || !ok || err != nil {
			t.Errorf("Draft = %q, %v, %v; want two", code, ok, err)
		}
	})
}

func TestBackup(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		l, _, _ := db.NewAnonymousLearner(ctx)
		submit(t, db, l.ID, "submit", "package x", newVerdict(verdict.OutcomeAccepted, verdict.TestResult{Name: "a", Status: verdict.StatusPass}))
		dst := filepath.Join(t.TempDir(), "copy.db")
		if err := db.Backup(ctx, dst); err != nil {
			t.Fatal(err)
		}
		if err := db.Backup(ctx, dst); err == nil {
			t.Error("backup overwrote an existing file")
		}
		cp, err := Open(dst)
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()
		subs, err := cp.Submissions(ctx, l.ID, "", 0)
		if err != nil || len(subs) != 1 || subs[0].Outcome != verdict.OutcomeAccepted {
			t.Errorf("backup holds %v, %v", subs, err)
		}
	})
}

// TestConcurrentWriters: many goroutines submitting at once lose nothing.
func TestConcurrentWriters(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		const writers, each = 16, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		ids := make([]int64, writers)
		for w := range writers {
			l, _, err := db.NewAnonymousLearner(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids[w] = l.ID
			wg.Go(func() {
				for i := range each {
					s := &Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Mode: "submit", Code: fmt.Sprint(w, "/", i)}
					if err := db.CreateSubmission(ctx, s); err != nil {
						errs <- err
						continue
					}
					if err := db.StartSubmission(ctx, s.ID); err != nil {
						errs <- err
					}
					if err := db.FinishSubmission(ctx, s.ID, newVerdict(verdict.OutcomeAccepted, verdict.TestResult{Name: "t", Status: verdict.StatusPass}), 1); err != nil {
						errs <- err
					}
					if _, err := db.Submissions(ctx, l.ID, "", 5); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var n, done int
		db.r.QueryRow("SELECT count(*), sum(CASE WHEN state = 'done' THEN 1 ELSE 0 END) FROM submissions").Scan(&n, &done)
		if n != writers*each || done != n {
			t.Errorf("%d submissions, %d done; want %d", n, done, writers*each)
		}
		for _, id := range ids {
			if p, _ := db.Progress(ctx, id); p["reconcile-loop"] != "solved" {
				t.Errorf("learner %d progress %v", id, p)
			}
		}
	})
}

// BenchmarkSubmission: create, start and finish one submission with four
// test rows (three write transactions), from parallel goroutines.
func BenchmarkSubmission(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	l, _, _ := db.NewAnonymousLearner(ctx)
	v := newVerdict(verdict.OutcomeWrongAnswer, verdict.TestResult{Name: "a", Status: verdict.StatusPass}, verdict.TestResult{Name: "b", Status: verdict.StatusPass},
		verdict.TestResult{Name: "c", Status: verdict.StatusPass}, verdict.TestResult{Name: "d", Status: verdict.StatusFail, Oracle: "safety", FaultClasses: []verdict.Fault{"restart"}})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s := &Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Mode: "submit", Code: "package x"}
			if err := db.CreateSubmission(ctx, s); err != nil {
				b.Error(err)
				return
			}
			db.StartSubmission(ctx, s.ID)
			if err := db.FinishSubmission(ctx, s.ID, v, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestMigrationLock: while WithMigrationLock's fn runs, another process's
// records migrations wait for it (one lock for both), and once fn has
// returned no session holds the lock.
func TestMigrationLock(t *testing.T) {
	url := pgtest.URL(t)
	db, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	// lockRows counts the sessions holding (granted) or awaiting the lock.
	lockRows := func(granted bool) int {
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
			AND objid = $1 AND granted = $2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
			migrateLock, granted).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	opened := make(chan error, 1)
	err = db.WithMigrationLock(ctx, func(context.Context) error {
		if n := lockRows(true); n != 1 {
			t.Errorf("%d sessions hold the migration lock inside fn; want 1", n)
		}
		go func() {
			other, err := Open(url)
			if err == nil {
				other.Close()
			}
			opened <- err
		}()
		for lockRows(false) == 0 {
			select {
			case err := <-opened:
				t.Fatalf("a second Open migrated while the lock was held (err %v)", err)
			case <-time.After(10 * time.Millisecond):
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("the second Open, once the lock was free: %v", err)
	}
	if n := lockRows(true) + lockRows(false); n != 0 {
		t.Errorf("%d sessions still hold or await the migration lock", n)
	}
}
