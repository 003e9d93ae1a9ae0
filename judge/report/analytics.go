package report

import (
	"cmp"
	"slices"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// Analytics describes how a class fared on one exercise. Shares are of the
// learners who attempted it; only the learners' own judged submits count.
type Analytics struct {
	Exercise         string  `json:"exercise"`
	Learners         int     `json:"learners"` // in the class
	Attempted        int     `json:"attempted"`
	Solved           int     `json:"solved"`
	PassRate         float64 `json:"pass_rate"`
	FirstTryPassRate float64 `json:"first_try_pass_rate"`
	Submissions      int     `json:"submissions"`
	// Outcomes count submits: each one's Share is of all the exercise's
	// submits, so the shares add up to 100 % (give or take rounding), and
	// Learners says how many learners had that outcome at least once.
	Outcomes []Count `json:"outcomes"`
	// AttemptsToSolve is how many submits solvers needed, in buckets.
	AttemptsToSolve []Bucket `json:"attempts_to_solve"`
	// The misconception map: what failed, by test, oracle and fault class.
	FailingTests        []Count `json:"failing_tests"`
	FailingOracles      []Count `json:"failing_oracles"`
	FailingFaultClasses []Count `json:"failing_fault_classes"`
	MedianTimeToSolveMs int64   `json:"median_time_to_solve_ms"`
}

// Count is how many learners (and submissions) showed something.
type Count struct {
	Name     string `json:"name"`
	Learners int    `json:"learners"`
	// Share is of the learners who attempted the exercise (a learner may
	// show several, so shares need not add up to 100 %); for Outcomes, of
	// the submits.
	Share       float64 `json:"share"`
	Submissions int     `json:"submissions"`
}

// Bucket is one bar of a histogram.
type Bucket struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

var attemptBuckets = []struct {
	label    string
	min, max int
}{{"1", 1, 1}, {"2", 2, 2}, {"3", 3, 3}, {"4", 4, 4}, {"5", 5, 5}, {"6-10", 6, 10}, {"11+", 11, 1 << 30}}

// tally counts learners and submissions per name.
type tally struct {
	subs     map[string]int
	learners map[string]map[int64]bool
}

func newTally() *tally {
	return &tally{subs: map[string]int{}, learners: map[string]map[int64]bool{}}
}

func (t *tally) add(name string, learner int64) {
	if name == "" {
		return
	}
	if t.learners[name] == nil {
		t.learners[name] = map[int64]bool{}
	}
	t.learners[name][learner] = true
}

func (t *tally) counts(attempted int) []Count {
	out := []Count{}
	for name, ls := range t.learners {
		out = append(out, Count{Name: name, Learners: len(ls), Share: ratio(len(ls), attempted), Submissions: t.subs[name]})
	}
	sortCounts(out)
	return out
}

// submitCounts is counts with each share of all submits, most submits first.
func (t *tally) submitCounts(submits int) []Count {
	out := []Count{}
	for name, ls := range t.learners {
		out = append(out, Count{Name: name, Learners: len(ls), Share: ratio(t.subs[name], submits), Submissions: t.subs[name]})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(b.Submissions-a.Submissions, b.Learners-a.Learners, cmp.Compare(a.Name, b.Name))
	})
	return out
}

func analytics(in *Input, cols []ExerciseInfo, rows []*LearnerRow) []*Analytics {
	tests := map[int64][]*records.TestRow{}
	for _, t := range in.Tests {
		tests[t.SubmissionID] = append(tests[t.SubmissionID], t)
	}
	inClass := map[int64]bool{}
	for _, l := range in.Learners {
		inClass[l.ID] = true
	}
	type learnerState struct {
		attempts int
		solvedAt int // attempt number of the first accepted submit, 0 if none
	}
	var out []*Analytics
	for ci, col := range cols {
		a := &Analytics{Exercise: col.Slug, Learners: len(in.Learners)}
		per := map[int64]*learnerState{}
		var order []int64 // learners in order of their first attempt
		outcomes := newTally()
		ft, fo, ff := newTally(), newTally(), newTally()
		for _, s := range in.Submissions {
			if s.Exercise != col.Slug || !s.Charged() || s.Mode != verdict.ModeSubmit || !inClass[s.LearnerID] {
				continue
			}
			a.Submissions++
			st := per[s.LearnerID]
			if st == nil {
				st = &learnerState{}
				per[s.LearnerID] = st
				order = append(order, s.LearnerID)
			}
			st.attempts++
			if s.Outcome == verdict.OutcomeAccepted && st.solvedAt == 0 {
				st.solvedAt = st.attempts
			}
			outcomes.add(string(s.Outcome), s.LearnerID)
			outcomes.subs[string(s.Outcome)]++
			// A name counts once per submission, however many tests share it.
			seen := map[string]bool{}
			for _, t := range tests[s.ID] {
				if t.Status == verdict.StatusPass {
					continue
				}
				mark := func(tl *tally, kind, name string) {
					if name == "" || seen[kind+"\x00"+name] {
						return
					}
					seen[kind+"\x00"+name] = true
					tl.add(name, s.LearnerID)
					tl.subs[name]++
				}
				mark(ft, "t", t.Name)
				mark(fo, "o", string(t.Oracle))
				for _, fc := range t.FaultClasses {
					mark(ff, "f", string(fc))
				}
			}
		}
		a.Attempted = len(order)
		firstTry := 0
		hist := make([]int, len(attemptBuckets))
		for _, id := range order {
			st := per[id]
			if st.solvedAt == 1 {
				firstTry++
			}
			if st.solvedAt > 0 {
				for i, b := range attemptBuckets {
					if st.solvedAt >= b.min && st.solvedAt <= b.max {
						hist[i]++
					}
				}
			}
		}
		var times []int64
		for _, r := range rows {
			c := r.Cells[ci]
			if c.FirstSolved != nil {
				a.Solved++
				if c.FirstSubmitted != nil && !c.FirstSolved.Before(*c.FirstSubmitted) {
					times = append(times, c.TimeToSolveMs)
				}
			}
		}
		a.PassRate = ratio(a.Solved, a.Attempted)
		a.FirstTryPassRate = ratio(firstTry, a.Attempted)
		a.Outcomes = outcomes.submitCounts(a.Submissions)
		for i, b := range attemptBuckets {
			a.AttemptsToSolve = append(a.AttemptsToSolve, Bucket{Label: b.label, Count: hist[i]})
		}
		a.FailingTests = ft.counts(a.Attempted)
		a.FailingOracles = fo.counts(a.Attempted)
		a.FailingFaultClasses = ff.counts(a.Attempted)
		a.MedianTimeToSolveMs = medianMs(times)
		out = append(out, a)
	}
	return out
}
