package report

import (
	"time"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// LearnerRow is one learner's line of the class matrix.
type LearnerRow struct {
	ID       int64   `json:"id"`
	Name     string  `json:"name"`
	Solved   int     `json:"solved"`
	Attempts int     `json:"attempts"`
	Cells    []*Cell `json:"cells"` // in the order of Report.Exercises
}

// Cell is one learner's standing on one exercise. Attempts count the
// learner's own judged submits; runs (samples only), re-judges, internal
// errors and submissions not judged are not attempts.
type Cell struct {
	Exercise string `json:"exercise"`
	Status   string `json:"status"` // solved, solved_late, attempted or not_started
	Attempts int    `json:"attempts"`
	Runs     int    `json:"runs"`
	// NotJudged counts submissions the server could not judge.
	NotJudged      int        `json:"not_judged,omitempty"`
	Best           *Result    `json:"best,omitempty"`
	Latest         *Result    `json:"latest,omitempty"`
	FirstSubmitted *time.Time `json:"first_submitted,omitempty"`
	LastSubmitted  *time.Time `json:"last_submitted,omitempty"`
	FirstSolved    *time.Time `json:"first_solved,omitempty"`
	// TimeToSolveMs runs from the first submission to the first accepted submit.
	TimeToSolveMs int64 `json:"time_to_solve_ms,omitempty"`
	Late          bool  `json:"late"`
}

// Result is one judged submit as the matrix shows it.
type Result struct {
	Submission      int64           `json:"submission"`
	Outcome         verdict.Outcome `json:"outcome"`
	Passed          int             `json:"passed"`
	Total           int             `json:"total"`
	ExerciseVersion string          `json:"exercise_version"`
	Rejudge         bool            `json:"rejudge,omitempty"`
	At              time.Time       `json:"at"` // when the learner sent it
}

// Score is the share of tests passed.
func (r *Result) Score() float64 { return ratio(r.Passed, r.Total) }

// Cell statuses.
const (
	StatusSolved     = "solved"
	StatusSolvedLate = "solved_late"
	StatusAttempted  = "attempted"
	StatusNotStarted = "not_started"
)

// better says whether a beats b as a learner's best result: accepted first,
// then the larger share of tests passed, then the earlier.
func better(a, b *Result) bool {
	if b == nil {
		return true
	}
	if (a.Outcome == verdict.OutcomeAccepted) != (b.Outcome == verdict.OutcomeAccepted) {
		return a.Outcome == verdict.OutcomeAccepted
	}
	if sa, sb := a.Score(), b.Score(); sa != sb {
		return sa > sb
	}
	return false
}

// sentAt is when the learner sent the code: for a re-judge, the original's time.
func sentAt(s *records.Submission, byID map[int64]*records.Submission) time.Time {
	if s.RejudgeOf != 0 {
		if o := byID[s.RejudgeOf]; o != nil {
			return o.QueuedAt
		}
	}
	return s.QueuedAt
}

func timePtr(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

func matrix(in *Input, cols []ExerciseInfo) []*LearnerRow {
	byID := map[int64]*records.Submission{}
	for _, s := range in.Submissions {
		byID[s.ID] = s
	}
	col := map[string]int{}
	for i, c := range cols {
		col[c.Slug] = i
	}
	rows := make([]*LearnerRow, 0, len(in.Learners))
	rowOf := map[int64]*LearnerRow{}
	for _, l := range in.Learners {
		r := &LearnerRow{ID: l.ID, Name: l.Name, Cells: make([]*Cell, len(cols))}
		for i, c := range cols {
			r.Cells[i] = &Cell{Exercise: c.Slug, Status: StatusNotStarted}
		}
		rows = append(rows, r)
		rowOf[l.ID] = r
	}
	for _, s := range in.Submissions { // oldest first
		r := rowOf[s.LearnerID]
		if r == nil {
			continue
		}
		c := r.Cells[col[s.Exercise]]
		if s.State == records.StateNotJudged {
			c.NotJudged++
			continue
		}
		if s.State != records.StateDone || s.Outcome == verdict.OutcomeInternalError {
			continue
		}
		if s.Charged() {
			if c.FirstSubmitted == nil {
				c.FirstSubmitted = timePtr(s.QueuedAt)
			}
			c.LastSubmitted = timePtr(s.QueuedAt)
			if s.Mode == verdict.ModeRun {
				c.Runs++
			} else {
				c.Attempts++
				r.Attempts++
			}
		}
		if s.Mode != verdict.ModeSubmit {
			continue
		}
		res := &Result{Submission: s.ID, Outcome: s.Outcome, Passed: s.Passed, Total: s.Total,
			ExerciseVersion: s.ExerciseVersion, Rejudge: s.RejudgeOf != 0, At: sentAt(s, byID).UTC()}
		c.Latest = res
		if better(res, c.Best) {
			c.Best = res
		}
		if s.Outcome == verdict.OutcomeAccepted && (c.FirstSolved == nil || res.At.Before(*c.FirstSolved)) {
			c.FirstSolved = timePtr(res.At)
		}
	}
	for _, r := range rows {
		for i, c := range r.Cells {
			switch {
			case c.FirstSolved != nil:
				r.Solved++
				c.Status = StatusSolved
				if d := cols[i].Due; d != nil && c.FirstSolved.After(*d) {
					c.Late, c.Status = true, StatusSolvedLate
				}
				if c.FirstSubmitted != nil && !c.FirstSolved.Before(*c.FirstSubmitted) {
					c.TimeToSolveMs = c.FirstSolved.Sub(*c.FirstSubmitted).Milliseconds()
				}
			case c.Attempts > 0 || c.Runs > 0:
				c.Status = StatusAttempted
			}
		}
	}
	return rows
}
