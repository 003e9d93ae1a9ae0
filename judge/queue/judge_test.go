package queue

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/records/pgtest"
	"ctrljudge/judge/verdict"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// acceptAll accepts everything, after a compiling event.
type acceptAll struct{ calls int }

func (f *acceptAll) Judge(ctx context.Context, s judge.Submission) *verdict.Verdict {
	f.calls++
	s.Progress(verdict.Event{Phase: verdict.PhaseCompiling})
	return &verdict.Verdict{Version: 3, Status: verdict.StatusPass, Outcome: verdict.OutcomeAccepted, Mode: s.Mode,
		Exercise: s.Exercise.Slug, Engine: judge.EngineVersion}
}

func newJudging(t *testing.T, target string) (*Judging, *acceptAll) {
	t.Helper()
	db, err := records.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		t.Fatal(err)
	}
	eng := &acceptAll{}
	return &Judging{DB: db, Catalog: cat, Engine: eng, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, eng
}

func submit(t *testing.T, db *records.DB, exercise string) int64 {
	t.Helper()
	ctx := context.Background()
	l, _, err := db.NewAnonymousLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &records.Submission{LearnerID: l.ID, Exercise: exercise, Engine: judge.EngineVersion, Mode: verdict.ModeSubmit, Code: "package main", Seed: 1}
	if err := db.CreateSubmission(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// TestJudgeOnceToAVerdict: a queued submission is judged, stored and
// published once; a second delivery judges nothing; a submission whose
// exercise is gone is settled as not judged.
func TestJudgeOnceToAVerdict(t *testing.T) {
	jg, eng := newJudging(t, filepath.Join(t.TempDir(), "records.db"))
	ctx := context.Background()
	id := submit(t, jg.DB, "reconcile-loop")
	var got []Event
	a := Attempt{ID: id, N: 1, Max: MaxJudgeAttempts, Publish: func(ev Event) { got = append(got, ev) }}
	if res := jg.Judge(ctx, a); res.State != Settled {
		t.Fatalf("first delivery: %+v", res)
	}
	if len(got) != 2 || got[0].Kind != Compiling || got[1].Kind != Done || got[1].Verdict.Outcome != verdict.OutcomeAccepted {
		t.Errorf("events %+v", got)
	}
	if s, err := jg.DB.Submission(ctx, id); err != nil || s.State != records.StateDone {
		t.Errorf("stored %+v, %v", s, err)
	}
	got = nil
	if res := jg.Judge(ctx, a); res.State != Settled || len(got) != 0 || eng.calls != 1 {
		t.Errorf("second delivery: %+v, events %+v, %d judgements", res, got, eng.calls)
	}

	gone := submit(t, jg.DB, "removed-exercise")
	got = nil
	a.ID = gone
	if res := jg.Judge(ctx, a); res.State != Settled || len(got) != 1 || got[0].Kind != NotJudged {
		t.Errorf("exercise gone: %+v, events %+v", res, got)
	}
	if s, _ := jg.DB.Submission(ctx, gone); s.State != records.StateNotJudged || !strings.Contains(s.Note, "no longer exists") {
		t.Errorf("exercise gone: stored %s %q", s.State, s.Note)
	}
}

// TestOneRiverJobPerSubmission: a submission is one River job: queuing it
// again (as a recovery after a crash does) adds none.
func TestOneRiverJobPerSubmission(t *testing.T) {
	jg, _ := newJudging(t, pgtest.URL(t))
	q, err := Open(Config{DB: jg.DB, Catalog: jg.Catalog, Engine: jg.Engine, Logger: jg.Log, JudgeElsewhere: true})
	if err != nil {
		t.Fatal(err)
	}
	r := q.(*River)
	defer r.Close(context.Background(), 0)
	ctx := context.Background()
	id := submit(t, jg.DB, "reconcile-loop")
	for i, wantDup := range []bool{false, true} {
		res, err := r.client.Insert(ctx, judgeArgs{SubmissionID: id}, nil)
		if err != nil || res.UniqueSkippedAsDuplicate != wantDup {
			t.Errorf("insert %d of submission %d: %+v, %v", i+1, id, res, err)
		}
	}
	if n, err := q.Depth(ctx); err != nil || n != 1 {
		t.Errorf("depth %d, %v; want 1", n, err)
	}
}

// TestRejudge: a re-judge is a new record at the exercise's version, in
// submit mode with the original's code and seed; one the line refuses is
// settled as not judged at once, never left queued.
func TestRejudge(t *testing.T) {
	jg, _ := newJudging(t, filepath.Join(t.TempDir(), "records.db"))
	ctx := context.Background()
	id := submit(t, jg.DB, "reconcile-loop")
	orig, err := jg.DB.Submission(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	q := newLine(1) // and no worker: the first re-judge fills it
	for i, want := range []bool{true, false} {
		queued, err := q.rejudge(ctx, jg, orig)
		if err != nil || queued != want {
			t.Fatalf("re-judge %d: queued %v, %v; want %v", i+1, queued, err, want)
		}
	}
	subs, err := jg.DB.Submissions(ctx, orig.LearnerID, "", 0)
	if err != nil || len(subs) != 3 {
		t.Fatalf("%d submissions, %v; want the original and two re-judges", len(subs), err)
	}
	ex, _ := jg.Catalog.Find("reconcile-loop")
	for i, s := range subs[:2] { // newest first
		if s.RejudgeOf != orig.ID || s.ExerciseVersion != ex.Version || s.Mode != verdict.ModeSubmit || s.Code != orig.Code ||
			s.Seed != orig.Seed || s.LearnerID != orig.LearnerID || s.Engine != judge.EngineVersion {
			t.Errorf("re-judge %+v of %+v", s, orig)
		}
		if refused := i == 0; refused && (s.State != records.StateNotJudged || !strings.Contains(s.Note, "busy")) ||
			!refused && s.State != records.StateQueued {
			t.Errorf("re-judge %d: %s %q", s.ID, s.State, s.Note)
		}
	}
	if q.Lookup(subs[1].ID) == nil || q.Lookup(subs[0].ID) != nil {
		t.Error("the line holds the wrong re-judge")
	}
	if _, err := q.rejudge(ctx, jg, &records.Submission{ID: 99, Exercise: "gone"}); err == nil {
		t.Error("re-judge of an unknown exercise accepted")
	}
}
