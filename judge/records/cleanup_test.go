package records

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPruneAbandonedLearners: only anonymous learners that left nothing
// reachable and were not seen within the idle period go; everyone else,
// and every submission, stays.
func TestPruneAbandonedLearners(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		const idle = 7 * 24 * time.Hour
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		now := t0
		db.SetClock(func() time.Time { return now })

		anon := func() (*Learner, string) {
			t.Helper()
			l, token, err := db.NewAnonymousLearner(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return l, token
		}
		empty, emptyToken := anon()   // a failed sign-in of old: nothing at all
		withSub, _ := anon()          // submitted once
		withDraft, _ := anon()        // a draft and a live session: may come back
		orphan, orphanToken := anon() // a draft, but its session was ended
		if err := db.SaveDraft(ctx, withDraft.ID, "reconcile-loop", "mine"); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveDraft(ctx, orphan.ID, "reconcile-loop", "lost"); err != nil {
			t.Fatal(err)
		}
		if err := db.EndSession(ctx, orphanToken); err != nil {
			t.Fatal(err)
		}
		sub := &Submission{LearnerID: withSub.ID, Exercise: "reconcile-loop", Mode: "run", Code: "x"}
		if err := db.CreateSubmission(ctx, sub); err != nil {
			t.Fatal(err)
		}
		in, err := db.AddInstructor(ctx, "Grace", "a long password")
		if err != nil {
			t.Fatal(err)
		}
		class, err := db.CreateClass(ctx, in.ID, "Ops 101")
		if err != nil {
			t.Fatal(err)
		}
		named, _, err := db.SignInLearner(ctx, "Lin", class.JoinCode) // joined, never submitted
		if err != nil {
			t.Fatal(err)
		}
		// An orphan whose draft was saved lately was seen lately.
		recentOrphan, recentToken := anon()
		if err := db.EndSession(ctx, recentToken); err != nil {
			t.Fatal(err)
		}

		exists := func(l *Learner) bool {
			_, err := db.Learner(ctx, l.ID)
			if err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			return err == nil
		}

		// Within the idle period nothing goes.
		now = t0.Add(idle - time.Hour)
		if err := db.SaveDraft(ctx, recentOrphan.ID, "reconcile-loop", "typed yesterday"); err != nil {
			t.Fatal(err)
		}
		if n, err := db.PruneAbandonedLearners(ctx, idle); err != nil || n != 0 {
			t.Fatalf("prune within the idle period: %d, %v", n, err)
		}
		late, _ := anon() // created after t0: too young at the next prune

		now = t0.Add(idle + time.Hour)
		n, err := db.PruneAbandonedLearners(ctx, idle)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("pruned %d learners, want 2 (the empty one and the orphan)", n)
		}
		for _, c := range []struct {
			name string
			l    *Learner
			keep bool
		}{
			{"empty", empty, false}, {"orphan with a draft and no session", orphan, false},
			{"with a submission", withSub, true}, {"with a draft and a live session", withDraft, true},
			{"named in a class", named, true}, {"orphan with a recent draft", recentOrphan, true},
			{"created recently", late, true},
		} {
			if got := exists(c.l); got != c.keep {
				t.Errorf("%s: exists %v, want %v", c.name, got, c.keep)
			}
		}
		if _, err := db.LearnerBySession(ctx, emptyToken); !errors.Is(err, ErrNotFound) {
			t.Errorf("a pruned learner's session still works: %v", err)
		}
		if _, ok, _ := db.Draft(ctx, orphan.ID, "reconcile-loop"); ok {
			t.Error("a pruned learner's draft is left")
		}
		if s, err := db.Submission(ctx, sub.ID); err != nil || s.LearnerID != withSub.ID {
			t.Errorf("submission after prune: %+v, %v", s, err)
		}
	})
}

// TestPruneAbandonedLearnersInBatches: a flood's worth of rows goes in
// several short statements, all of it.
func TestPruneAbandonedLearnersInBatches(t *testing.T) {
	both(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		now := t0
		db.SetClock(func() time.Time { return now })
		const flood = 2*pruneBatch + 7
		for range flood {
			if _, _, err := db.NewAnonymousLearner(ctx); err != nil {
				t.Fatal(err)
			}
		}
		now = t0.Add(8 * 24 * time.Hour)
		n, err := db.PruneAbandonedLearners(ctx, 7*24*time.Hour)
		if err != nil || n != flood {
			t.Fatalf("pruned %d, %v; want %d", n, err, flood)
		}
		var left int
		if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM learners").Scan(&left); err != nil || left != 0 {
			t.Errorf("%d learners left (%v)", left, err)
		}
	})
}
