package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/records"
	"ctrljudge/judge/records/recordstest"
	"ctrljudge/judge/verdict"
)

// syntheticClass builds a class of n learners, each with subs submits of
// each of three exercises (code of about 60 lines, varied per learner).
func syntheticClass(n, subs int) *Input {
	in := &Input{Class: &records.Class{ID: 1, Name: "bench"}, Due: map[string]time.Time{}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	slugs := []string{"a", "b", "c"}
	for _, s := range slugs {
		in.Exercises = append(in.Exercises, Exercise{Slug: s, Starter: []byte(recordstest.Starter)})
	}
	id := int64(0)
	for l := range n {
		in.Learners = append(in.Learners, &records.Learner{ID: int64(l + 1), Name: fmt.Sprintf("learner %03d", l), ClassID: 1})
		for _, slug := range slugs {
			for k := range subs {
				id++
				var b strings.Builder
				b.WriteString(recordstest.Starter)
				for f := range 6 {
					fmt.Fprintf(&b, "\nfunc helper%d(x int) int {\n\tfor i := 0; i < x*%d; i++ {\n\t\tif i%%%d == 0 {\n\t\t\tx += i\n\t\t}\n\t}\n\treturn x\n}\n", f, l%7+f, k+2)
				}
				out := verdict.OutcomeWrongAnswer
				if k == subs-1 && l%2 == 0 {
					out = verdict.OutcomeAccepted
				}
				in.Submissions = append(in.Submissions, &records.Submission{ID: id, LearnerID: int64(l + 1), ClassID: 1, Exercise: slug,
					Mode: "submit", Code: b.String(), State: records.StateDone, Outcome: out, Passed: 3, Total: 4,
					QueuedAt: t0.Add(time.Duration(id) * time.Minute)})
				if out != verdict.OutcomeAccepted {
					in.Tests = append(in.Tests, &records.TestRow{SubmissionID: id, Name: "restart", Status: verdict.StatusFail, Oracle: verdict.OracleIdempotency,
						FaultClasses: []verdict.Fault{verdict.FaultRestart}})
				}
			}
		}
	}
	return in
}

// BenchmarkCompute: a class of 100 learners, 3 exercises, 5 submits each.
func BenchmarkCompute(b *testing.B) {
	in := syntheticClass(100, 5)
	for b.Loop() {
		Compute(in, Options{Now: time.Unix(0, 0)})
	}
}

func BenchmarkFingerprints(b *testing.B) {
	src := []byte(syntheticClass(1, 1).Submissions[0].Code)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Fingerprints(src)
	}
}
