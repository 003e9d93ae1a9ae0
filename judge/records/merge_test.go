package records

import (
	"context"
	"errors"
	"testing"
	"time"

	"ctrljudge/judge/verdict"
)

func TestJoinClassMergesAnonymousPractice(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		in, err := db.AddInstructor(ctx, "Ada", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.CreateClass(ctx, in.ID, "Ops 101")
		if err != nil {
			t.Fatal(err)
		}
		other, err := db.CreateClass(ctx, in.ID, "Ops 102")
		if err != nil {
			t.Fatal(err)
		}
		pass := verdict.TestResult{Name: "a", Status: verdict.StatusPass}
		fail := verdict.TestResult{Name: "a", Status: verdict.StatusFail, Oracle: "convergence"}

		// Bo already practised in the class from another browser: tried
		// reconcile-loop, and has a draft of it.
		bo, _, err := db.SignInLearner(ctx, "Bo", c.JoinCode)
		if err != nil {
			t.Fatal(err)
		}
		own := submit(t, db, bo.ID, verdict.ModeSubmit, "bo's own", newVerdict(verdict.OutcomeWrongAnswer, fail))
		if err := db.SaveDraft(ctx, bo.ID, "reconcile-loop", "older draft"); err != nil {
			t.Fatal(err)
		}

		// Anonymously, in this browser: solved reconcile-loop, tried another.
		now = now.Add(time.Hour)
		anon, anonTok, err := db.NewAnonymousLearner(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s1 := submit(t, db, anon.ID, verdict.ModeSubmit, "anon solved", newVerdict(verdict.OutcomeAccepted, pass))
		s2 := &Submission{LearnerID: anon.ID, Exercise: "status", Mode: verdict.ModeRun, Code: "anon tried"}
		if err := db.CreateSubmission(ctx, s2); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishSubmission(ctx, s2.ID, newVerdict(verdict.OutcomeWrongAnswer, fail), 5); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		if err := db.SaveDraft(ctx, anon.ID, "reconcile-loop", "newer draft"); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveDraft(ctx, anon.ID, "finalizers", "anon only"); err != nil {
			t.Fatal(err)
		}

		l, tok, merged, err := db.JoinClass(ctx, "Bo", c.JoinCode, anon.ID)
		if err != nil || !merged || l.ID != bo.ID {
			t.Fatalf("JoinClass = %+v, merged %v, %v; want Bo (%d), merged", l, merged, err, bo.ID)
		}
		if got, err := db.LearnerBySession(ctx, tok); err != nil || got.ID != bo.ID {
			t.Errorf("new session is %+v, %v", got, err)
		}
		p, _ := db.Progress(ctx, bo.ID)
		if p["reconcile-loop"] != "solved" || p["status"] != "tried" {
			t.Errorf("progress after the merge: %v", p)
		}
		subs, _ := db.Submissions(ctx, bo.ID, "", 0)
		if len(subs) != 3 {
			t.Fatalf("Bo has %d submissions, want 3 (own and two anonymous)", len(subs))
		}
		for _, s := range subs {
			if s.ClassID != c.ID {
				t.Errorf("submission %d is in class %d, want %d", s.ID, s.ClassID, c.ID)
			}
			if s.ID == s1.ID && (s.Code != "anon solved" || s.Outcome != verdict.OutcomeAccepted || !s.QueuedAt.Equal(s1.QueuedAt)) {
				t.Errorf("moved submission changed: %+v", s)
			}
		}
		if cs, _ := db.ClassSubmissions(ctx, c.ID); len(cs) != 3 || cs[0].ID != own.ID {
			t.Errorf("class sees %d submissions", len(cs))
		}
		if d, _, _ := db.Draft(ctx, bo.ID, "reconcile-loop"); d != "newer draft" {
			t.Errorf("draft %q: the newer one should win", d)
		}
		if d, ok, _ := db.Draft(ctx, bo.ID, "finalizers"); !ok || d != "anon only" {
			t.Errorf("anonymous-only draft %q, %v", d, ok)
		}
		// The anonymous learner is gone, with its session.
		if _, err := db.Learner(ctx, anon.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("anonymous learner still there: %v", err)
		}
		if _, err := db.LearnerBySession(ctx, anonTok); !errors.Is(err, ErrNotFound) {
			t.Errorf("anonymous session still valid: %v", err)
		}

		// A named learner is never merged: Bo signing in as Cy in another
		// class from Bo's browser leaves both histories where they are.
		cy, _, merged, err := db.JoinClass(ctx, "Cy", other.JoinCode, bo.ID)
		if err != nil || merged {
			t.Fatalf("JoinClass from a named session: merged %v, %v", merged, err)
		}
		if s, _ := db.Submissions(ctx, cy.ID, "", 0); len(s) != 0 {
			t.Errorf("Cy took %d of Bo's submissions", len(s))
		}
		if s, _ := db.Submissions(ctx, bo.ID, "", 0); len(s) != 3 {
			t.Errorf("Bo kept %d submissions, want 3", len(s))
		}
		// Signing in again as oneself, or with no anonymous learner, merges nothing.
		if _, _, merged, err := db.JoinClass(ctx, "Bo", c.JoinCode, bo.ID); err != nil || merged {
			t.Errorf("Bo into Bo: merged %v, %v", merged, err)
		}
		if _, _, merged, err := db.JoinClass(ctx, "Bo", c.JoinCode, 0); err != nil || merged {
			t.Errorf("no anonymous learner: merged %v, %v", merged, err)
		}
		// A wrong code merges nothing and keeps the anonymous learner.
		anon2, _, _ := db.NewAnonymousLearner(ctx)
		submit(t, db, anon2.ID, verdict.ModeRun, "x", newVerdict(verdict.OutcomeWrongAnswer, fail))
		if _, _, _, err := db.JoinClass(ctx, "Bo", "NOPE-NOPE", anon2.ID); !errors.Is(err, ErrBadJoinCode) {
			t.Errorf("bad code: %v", err)
		}
		if s, _ := db.Submissions(ctx, anon2.ID, "", 0); len(s) != 1 {
			t.Errorf("a failed join moved the anonymous learner's submissions")
		}
	})
}

func TestJoinClassKeepsFirstSolve(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		in, _ := db.AddInstructor(ctx, "Ada", "correct horse battery")
		c, _ := db.CreateClass(ctx, in.ID, "Ops 101")
		pass := verdict.TestResult{Name: "a", Status: verdict.StatusPass}
		anon, _, _ := db.NewAnonymousLearner(ctx)
		submit(t, db, anon.ID, verdict.ModeSubmit, "early", newVerdict(verdict.OutcomeAccepted, pass))
		now = now.Add(time.Hour)
		bo, _, _ := db.SignInLearner(ctx, "Bo", c.JoinCode)
		submit(t, db, bo.ID, verdict.ModeSubmit, "late", newVerdict(verdict.OutcomeAccepted, pass))
		if _, _, _, err := db.JoinClass(ctx, "Bo", c.JoinCode, anon.ID); err != nil {
			t.Fatal(err)
		}
		var at int64
		if err := db.r.QueryRow("SELECT updated_at FROM progress WHERE learner_id = ? AND exercise = 'reconcile-loop'", bo.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		if want := now.Add(-time.Hour).UnixMilli(); at != want {
			t.Errorf("solved at %d, want the first solve %d", at, want)
		}
	})
}
