// Package recordstest seeds a records database with a small class for tests
// of reports and instructor pages: synthetic verdicts, a fixed clock, and
// hostile names and code (HTML, spreadsheet formulas) in every field a
// learner or instructor controls.
package recordstest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// engine is the judge version the fixture's verdicts claim.
const engine = "ctrljudge-test"

// Passwords of the fixture's instructors.
const (
	OwnerPassword = "owner password 1"
	OtherPassword = "other password 2"
)

// XSS is the payload planted in names, class names and code.
const XSS = `<script>alert(1)</script><img src=x onerror=alert(1)>`

// Fixture names what Seed created.
type Fixture struct {
	DB                *records.DB
	Owner, Other      *records.Instructor
	Class, OtherClass *records.Class
	Learners          map[string]*records.Learner // by name
	Submissions       []*records.Submission       // every one, in creation order
	Start             time.Time                   // the clock's first reading
}

// The fixture's one catalog exercise is reconcile-loop (171), at version
// v2, with Starter; owner-refs appears only in the records. Tests that need
// a catalog build it from these.
const (
	ExerciseNumber  = 171
	ExerciseSlug    = "reconcile-loop"
	ExerciseTitle   = "The reconcile loop"
	ExerciseChapter = "controller-pattern"
	ExerciseVersion = "v2"
)

// Starter is the fixture exercise's starter code.
const Starter = `package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

// Reconcile makes the world match the spec.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
`

// Solution is the fixture exercise's reference solution: Ada submits it
// as it is, Ben a renamed copy.
const Solution = solution

const solution = `package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
		if ctrl.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	var pods ctrl.PodList
	if err := c.List(ctx, &pods, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}
	for i := len(pods.Items); i < int(d.Spec.Replicas); i++ {
		if err := c.Create(ctx, newPod(&d, i)); err != nil {
			return ctrl.Result{}, err
		}
	}
	for i := int(d.Spec.Replicas); i < len(pods.Items); i++ {
		if err := c.Delete(ctx, &pods.Items[i]); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
`

// renamed is solution with every identifier renamed and comments added:
// similarity must still see it.
const renamed = `package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

// my own work
func Reconcile(cx context.Context, k ctrl.Client, r ctrl.Request) (ctrl.Result, error) {
	var dep ctrl.Deployment
	if e := k.Get(cx, r.NamespacedName, &dep); e != nil {
		if ctrl.IsNotFound(e) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, e
	}
	var ps ctrl.PodList
	if e := k.List(cx, &ps, ctrl.InNamespace(r.Namespace), ctrl.OwnedBy(&dep)); e != nil {
		return ctrl.Result{}, e
	}
	for n := len(ps.Items); n < int(dep.Spec.Replicas); n++ {
		if e := k.Create(cx, makePod(&dep, n)); e != nil {
			return ctrl.Result{}, e
		}
	}
	for n := int(dep.Spec.Replicas); n < len(ps.Items); n++ {
		if e := k.Delete(cx, &ps.Items[n]); e != nil {
			return ctrl.Result{}, e
		}
	}
	return ctrl.Result{}, nil
}
`

const different = `package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{}
	err := c.Get(ctx, req.NamespacedName, d)
	switch {
	case ctrl.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{Requeue: true}, nil
	}
	want := int(d.Spec.Replicas)
	var have ctrl.PodList
	_ = c.List(ctx, &have, ctrl.InNamespace(req.Namespace))
	if len(have.Items) == want {
		return ctrl.Result{}, nil
	}
	ctrl.Log("scaling from", len(have.Items), "to", want)
	return ctrl.Result{}, c.Create(ctx, newPod(d, len(have.Items)))
}
`

type test struct {
	name   string
	oracle verdict.Oracle
	faults []verdict.Fault
}

var (
	scaleUp  = test{"scale-up", verdict.OracleConvergence, nil}
	scaleDn  = test{"scale-down", verdict.OracleConvergence, nil}
	restart  = test{"restart-after-write", verdict.OracleIdempotency, []verdict.Fault{verdict.FaultCrashAfter, verdict.FaultRestart}}
	dupEvent = test{"duplicate-events", verdict.OracleSafety, []verdict.Fault{verdict.FaultDuplicate}}
	allTests = []test{scaleUp, scaleDn, restart, dupEvent}
)

// newVerdict passes every test except those in failing.
func newVerdict(slug string, outcome verdict.Outcome, failing ...test) *verdict.Verdict {
	v := &verdict.Verdict{Version: 3, Status: verdict.StatusPass, Outcome: outcome, Exercise: slug, ExerciseVersion: "v1",
		Engine: engine, Mode: verdict.ModeSubmit, Seed: 42}
	if outcome == verdict.OutcomeCompileError {
		v.Status, v.Message = verdict.StatusError, "reconcile.go:3:1: syntax error"
		return v
	}
	for _, t := range allTests {
		r := verdict.TestResult{Name: t.name, Status: verdict.StatusPass, FaultClasses: t.faults, Seed: 42}
		for _, f := range failing {
			if f.name == t.name {
				r.Status, r.Oracle, r.Message = verdict.StatusFail, f.oracle, "did not converge"
			}
		}
		if r.Status == verdict.StatusPass {
			v.Passed++
		} else {
			v.Failed++
			v.Status = verdict.StatusFail
		}
		v.Tests = append(v.Tests, r)
	}
	return v
}

// TB is the part of testing.TB that Seed uses, so programs (screenshots,
// demos) can seed a database too.
type TB interface {
	Helper()
	Fatal(args ...any)
	TempDir() string
	Cleanup(func())
}

var _ TB = testing.TB(nil)

// Seed creates a database in a temporary folder and fills it.
func Seed(t TB) *Fixture {
	t.Helper()
	db, err := records.Open(filepath.Join(t.TempDir(), "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &Fixture{DB: db, Learners: map[string]*records.Learner{},
		Start: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	now := f.Start
	db.SetClock(func() time.Time { return now })
	tick := func(d time.Duration) { now = now.Add(d) }
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	f.Owner, err = db.AddInstructor(ctx, "Grace", OwnerPassword)
	must(err)
	f.Other, err = db.AddInstructor(ctx, "Mallory", OtherPassword)
	must(err)
	f.Class, err = db.CreateClass(ctx, f.Owner.ID, "Ops 101 "+XSS)
	must(err)
	f.OtherClass, err = db.CreateClass(ctx, f.Other.ID, "Mallory's class")
	must(err)
	must(db.SetDueDate(ctx, f.Class.ID, "reconcile-loop", f.Start.Add(3*time.Hour)))
	must(db.SetDueDate(ctx, f.Class.ID, "owner-refs", f.Start.Add(48*time.Hour)))
	for _, name := range []string{"Ada", "Ben", "Cleo", "Dev", "=HYPERLINK(\"http://evil\")", XSS} {
		l, _, err := db.SignInLearner(ctx, name, f.Class.JoinCode)
		must(err)
		f.Learners[name] = l
		tick(time.Minute)
	}
	outsider, _, err := db.SignInLearner(ctx, "Eve", f.OtherClass.JoinCode)
	must(err)
	f.Learners["Eve"] = outsider

	send := func(name, slug string, mode verdict.Mode, code string, v *verdict.Verdict) *records.Submission {
		t.Helper()
		s := &records.Submission{LearnerID: f.Learners[name].ID, Exercise: slug, Mode: mode, Code: code,
			ExerciseVersion: "v1", Engine: engine, Seed: 42}
		must(db.CreateSubmission(ctx, s))
		f.Submissions = append(f.Submissions, s)
		tick(10 * time.Second)
		if v == nil {
			return s
		}
		must(db.StartSubmission(ctx, s.ID))
		tick(2 * time.Second)
		if mode == verdict.ModeRun {
			v.Mode = verdict.ModeRun
		}
		must(db.FinishSubmission(ctx, s.ID, v, 2000))
		tick(5 * time.Minute)
		return s
	}
	const rl, or = "reconcile-loop", "owner-refs"
	wa, ok := verdict.OutcomeWrongAnswer, verdict.OutcomeAccepted

	// Ada: a run, then accepted on the first submit.
	send("Ada", rl, "run", Starter, newVerdict(rl, wa, scaleUp, scaleDn))
	adaSolved := send("Ada", rl, "submit", solution, newVerdict(rl, ok))
	// Ben: fails the restart fault twice, then hands in Ada's code renamed, after the due date.
	send("Ben", rl, "submit", different, newVerdict(rl, wa, restart))
	send("Ben", rl, "submit", different+"\n// retry\n", newVerdict(rl, wa, restart, dupEvent))
	tick(3 * time.Hour)
	send("Ben", rl, "submit", renamed, newVerdict(rl, ok))
	// Cleo: a compile error, a judge failure (not charged), then the restart fault.
	send("Cleo", rl, "submit", "package controller\nfunc {", newVerdict(rl, verdict.OutcomeCompileError))
	send("Cleo", rl, "submit", different, &verdict.Verdict{Version: 3, Status: verdict.StatusError,
		Outcome: verdict.OutcomeInternalError, Message: "judge failed", Exercise: rl})
	send("Cleo", rl, "submit", "// "+XSS+"\n"+different, newVerdict(rl, wa, restart))
	// Dev: a submission lost to a restart, then owner-refs solved on the second try.
	lost := send("Dev", rl, "submit", solution, nil)
	must(db.StartSubmission(ctx, lost.ID))
	must(db.AbandonSubmission(ctx, lost.ID, "not judged (server restarted)"))
	send("Dev", or, "submit", different, newVerdict(or, wa, scaleDn))
	send("Dev", or, "submit", solution, newVerdict(or, ok))
	// The formula-named learner: one wrong answer.
	send("=HYPERLINK(\"http://evil\")", rl, "submit", different, newVerdict(rl, wa, scaleUp))
	// The learner outside the class must never show up.
	send("Eve", rl, "submit", solution, newVerdict(rl, ok))
	// The instructor re-judges Ada's solution under version v2 of the tests, which it fails.
	re := &records.Submission{LearnerID: adaSolved.LearnerID, Exercise: rl, Mode: "submit", Code: adaSolved.Code,
		ExerciseVersion: "v2", Engine: engine, Seed: 42, RejudgeOf: adaSolved.ID}
	must(db.CreateSubmission(ctx, re))
	f.Submissions = append(f.Submissions, re)
	v2 := newVerdict(rl, wa, dupEvent)
	v2.ExerciseVersion = "v2"
	must(db.FinishSubmission(ctx, re.ID, v2, 2000))
	tick(time.Minute)
	// Still running: not yet in any report.
	send("Ada", or, "submit", solution, nil)
	return f
}
