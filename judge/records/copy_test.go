package records

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/records/pgtest"
	"ctrljudge/judge/verdict"
)

// TestSchemasMatch: both databases' migrations make the same tables,
// columns (in order) and indexes.
func TestSchemasMatch(t *testing.T) {
	ctx := context.Background()
	lite, err := Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	list := func(db *DB, q string) string {
		t.Helper()
		rows, err := db.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			out = append(out, a+"."+b)
		}
		return strings.Join(out, "\n")
	}
	liteCols := list(lite, `SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
		WHERE m.type = 'table' ORDER BY m.name, p.cid`)
	pgCols := list(pg, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name <> 'schema_version' ORDER BY table_name, ordinal_position`)
	if liteCols != pgCols || liteCols == "" {
		t.Errorf("columns differ:\nSQLite:\n%s\n\nPostgreSQL:\n%s", liteCols, pgCols)
	}
	liteIdx := list(lite, `SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY 1, 2`)
	pgIdx := list(pg, `SELECT tablename, indexname FROM pg_indexes WHERE schemaname = 'public'
		AND indexname NOT LIKE '%\_pkey' AND indexname NOT LIKE '%\_key' ORDER BY 1, 2`)
	if liteIdx != pgIdx || liteIdx == "" {
		t.Errorf("indexes differ:\nSQLite:\n%s\n\nPostgreSQL:\n%s", liteIdx, pgIdx)
	}
	v1, _ := lite.SchemaVersion(ctx)
	v2, _ := pg.SchemaVersion(ctx)
	if v1 != v2 || v1 == 0 {
		t.Errorf("schema versions %d (SQLite), %d (PostgreSQL)", v1, v2)
	}
}

// snapshot is everything a learner and an instructor can see of a class.
func snapshot(t *testing.T, db *DB, classID int64, learners []int64) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	subs, err := db.ClassSubmissions(ctx, classID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		fmt.Fprintf(&b, "%+v\n", *s)
	}
	rows, err := db.ClassTestRows(ctx, classID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%+v\n", *r)
	}
	for _, id := range learners {
		p, _ := db.Progress(ctx, id)
		d, _, _ := db.Draft(ctx, id, "reconcile-loop")
		l, _ := db.Learner(ctx, id)
		fmt.Fprintf(&b, "%v %q %+v\n", p, d, l)
	}
	dues, _ := db.DueDates(ctx, classID)
	fmt.Fprintln(&b, dues)
	return b.String()
}

// TestCopyBetweenDatabases: SQLite records moved to PostgreSQL read the
// same, sessions still sign in, new ids follow the copied ones; and
// PostgreSQL's backup (a SQLite file) reads the same again.
func TestCopyBetweenDatabases(t *testing.T) {
	ctx := context.Background()
	src, err := Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	in, err := src.AddInstructor(ctx, "Grace", "a long password")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := src.CreateClass(ctx, in.ID, "Ops 101")
	if err := src.SetDueDate(ctx, c.ID, "reconcile-loop", src.now().Add(48*3600e9)); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var token string
	for i, name := range []string{"Ada", "Bo"} {
		l, tok, err := src.SignInLearner(ctx, name, c.JoinCode)
		if err != nil {
			t.Fatal(err)
		}
		ids, token = append(ids, l.ID), tok
		src.SaveDraft(ctx, l.ID, "reconcile-loop", fmt.Sprint("draft ", i))
		first := submit(t, src, l.ID, verdict.ModeSubmit, "x", newVerdict(verdict.OutcomeWrongAnswer,
			verdict.TestResult{Name: "a", Status: verdict.StatusFail, Oracle: "safety", Sample: true, FaultClasses: []verdict.Fault{"restart", "duplicate"}}))
		submit(t, src, l.ID, verdict.ModeSubmit, "y", newVerdict(verdict.OutcomeAccepted, verdict.TestResult{Name: "a", Status: verdict.StatusPass}))
		re := &Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Mode: "submit", Code: "x", RejudgeOf: first.ID}
		if err := src.CreateSubmission(ctx, re); err != nil {
			t.Fatal(err)
		}
	}
	want := snapshot(t, src, c.ID, ids)

	pg, err := Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	counts, err := Copy(ctx, pg, src)
	if err != nil {
		t.Fatal(err)
	}
	if counts["submissions"] != 6 || counts["test_fault_classes"] != 4 || counts["sessions"] != 2 {
		t.Errorf("copied %v", counts)
	}
	if got := snapshot(t, pg, c.ID, ids); got != want {
		t.Errorf("PostgreSQL after the copy:\n%s\nwant\n%s", got, want)
	}
	if l, err := pg.LearnerBySession(ctx, token); err != nil || l.ID != ids[1] {
		t.Errorf("a copied session signs in %+v, %v", l, err)
	}
	if _, _, err := pg.SignInInstructor(ctx, "Grace", "a long password"); err != nil {
		t.Errorf("copied instructor: %v", err)
	}
	l, _, err := pg.NewAnonymousLearner(ctx)
	if err != nil || l.ID <= ids[1] {
		t.Errorf("new learner after the copy: %+v, %v; want an id above %d", l, err, ids[1])
	}
	if _, err := Copy(ctx, pg, src); err == nil {
		t.Error("a copy into a database with records succeeded")
	}

	dst := filepath.Join(t.TempDir(), "backup.db")
	if err := pg.Backup(ctx, dst); err != nil {
		t.Fatal(err)
	}
	back, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if got := snapshot(t, back, c.ID, ids); got != want {
		t.Errorf("backup of PostgreSQL:\n%s\nwant\n%s", got, want)
	}
	if !reflect.DeepEqual(src.path, src.Path()) || back.Postgres() || !pg.Postgres() {
		t.Error("Postgres() is wrong")
	}
}

// TestFinishOnceUnderRace: processes racing to finish, or to sign in the
// same new name, leave one verdict and one learner.
func TestFinishOnceUnderRace(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		in, _ := db.AddInstructor(ctx, "Grace", "a long password")
		c, _ := db.CreateClass(ctx, in.ID, "Ops 101")
		l, _, _ := db.NewAnonymousLearner(ctx)
		const racers = 8
		for round := range 5 {
			s := &Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Mode: "submit", Code: fmt.Sprint(round)}
			if err := db.CreateSubmission(ctx, s); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, racers)
			ls := make(chan int64, racers)
			for i := range racers {
				go func() {
					errs <- db.FinishSubmission(ctx, s.ID, newVerdict(verdict.OutcomeAccepted, verdict.TestResult{Name: "a", Status: verdict.StatusPass}), 1)
					l, _, err := db.SignInLearner(ctx, fmt.Sprint("new", round), c.JoinCode)
					if err != nil {
						t.Errorf("racer %d signing in: %v", i, err)
						ls <- 0
						return
					}
					ls <- l.ID
				}()
			}
			ok := 0
			learners := map[int64]bool{}
			for range racers {
				if err := <-errs; err == nil {
					ok++
				} else if !strings.Contains(err.Error(), "wrong state") {
					t.Errorf("a losing finisher: %v", err)
				}
				learners[<-ls] = true
			}
			var rows int
			db.r.QueryRow("SELECT count(*) FROM test_results WHERE submission_id = ?", s.ID).Scan(&rows)
			if ok != 1 || rows != 1 || len(learners) != 1 {
				t.Errorf("round %d: %d finishers won, %d test rows, %d learners; want 1, 1, 1", round, ok, rows, len(learners))
			}
		}
	})
}

// TestJudgeEvents: events read on from the last seen, per submission;
// workers count as alive while seen.
func TestJudgeEvents(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		l, _, _ := db.NewAnonymousLearner(ctx)
		a := submit(t, db, l.ID, "run", "a", nil)
		b := submit(t, db, l.ID, "run", "b", nil)
		for i, s := range []*Submission{a, b, a} {
			if err := db.AddJudgeEvent(ctx, s.ID, "progress", []byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
				t.Fatal(err)
			}
		}
		evs, err := db.JudgeEvents(ctx, a.ID, 0)
		if err != nil || len(evs) != 2 || string(evs[1].Data) != `{"n":2}` {
			t.Fatalf("events of a: %+v, %v", evs, err)
		}
		if more, _ := db.JudgeEvents(ctx, a.ID, evs[0].ID); len(more) != 1 || more[0].ID != evs[1].ID {
			t.Errorf("events after the first: %+v", more)
		}
		db.DeleteJudgeEvents(ctx, a.ID)
		if left, _ := db.JudgeEvents(ctx, a.ID, 0); len(left) != 0 {
			t.Errorf("%d events left after delete", len(left))
		}
		now := db.now()
		db.SetClock(func() time.Time { return now })
		db.WorkerSeen(ctx, "w1", "host-a", 2)
		db.WorkerSeen(ctx, "w2", "host-b", 4)
		db.WorkerSeen(ctx, "w1", "host-a", 2)
		if n, slots, err := db.WorkersAlive(ctx, time.Minute); n != 2 || slots != 6 || err != nil {
			t.Errorf("alive %d (%d slots), %v; want 2 (6)", n, slots, err)
		}
		now = now.Add(2 * time.Minute)
		db.WorkerSeen(ctx, "w2", "host-b", 4)
		db.WorkerGone(ctx, "w1")
		if n, _, _ := db.WorkersAlive(ctx, time.Minute); n != 1 {
			t.Errorf("alive %d; want 1", n)
		}
	})
}
