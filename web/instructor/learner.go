package instructor

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
	"ctrljudge/judge/report"
	"ctrljudge/judge/verdict"
)

type learnerPage struct {
	page
	Learner     *records.Learner
	Exercise    string   // filter; "" for all
	Exercises   []string // the learner's exercises, in first-seen order
	Submissions []*records.Submission
	Shown       *records.Submission
	Verdict     *verdict.Verdict
	Code        []report.CodeLine
	DiffA       *records.Submission
	DiffB       *records.Submission
	Diff        []report.DiffLine

	all []*records.Submission // newest first
}

// path is the learner's page, with no query.
func (p learnerPage) path() string {
	return fmt.Sprintf("%s/classes/%d/learners/%d", p.Base, p.Class.ID, p.Learner.ID)
}

// FilterLink lists the learner's submissions of one exercise ("" for all).
func (p learnerPage) FilterLink(exercise string) string { return link(p.path(), "exercise", exercise) }

// ViewLink opens a submission, keeping the current filter.
func (p learnerPage) ViewLink(id int64) string {
	return link(p.path(), "exercise", p.Exercise, "show", strconv.FormatInt(id, 10))
}

// CompareLink compares submission a with b, keeping the filter.
func (p learnerPage) CompareLink(a, b int64) string {
	return link(p.path(), "exercise", p.Exercise, "a", strconv.FormatInt(a, 10), "b", strconv.FormatInt(b, 10))
}

// Previous is the learner's submission of the same exercise sent before s
// (nil if none): what "changes" compares s with.
func (p learnerPage) Previous(s *records.Submission) *records.Submission {
	for i, x := range p.all {
		if x.ID == s.ID {
			for _, y := range p.all[i+1:] {
				if y.Exercise == s.Exercise && y.RejudgeOf == 0 {
					return y
				}
			}
		}
	}
	return nil
}

// Action is the learner page's own path, for its compare form.
func (p learnerPage) Action() string { return p.path() }

// handleLearner shows a learner's submissions, newest first; ?show=ID
// opens one (code and verdict), ?a=ID&b=ID compares two.
func (h *handler) handleLearner(c echo.Context) error {
	cl := class(c)
	ctx := c.Request().Context()
	id, err := strconv.ParseInt(c.Param("learner"), 10, 64)
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, "no such learner")
	}
	l, err := h.DB.Learner(ctx, id)
	if errors.Is(err, records.ErrNotFound) || (err == nil && l.ClassID != cl.ID) {
		return echo.NewHTTPError(http.StatusNotFound, "no such learner in this class")
	}
	if err != nil {
		return err
	}
	all, err := h.DB.Submissions(ctx, l.ID, "", 0)
	if err != nil {
		return err
	}
	p := learnerPage{page: h.page(c, l.Name+" · "+cl.Name), Learner: l, Exercise: c.QueryParam("exercise"), all: all}
	seen := map[string]bool{}
	byID := map[int64]*records.Submission{}
	for i := len(all) - 1; i >= 0; i-- {
		s := all[i]
		byID[s.ID] = s
		if !seen[s.Exercise] {
			seen[s.Exercise] = true
			p.Exercises = append(p.Exercises, s.Exercise)
		}
	}
	if p.Exercise != "" && !seen[p.Exercise] {
		p.Exercises = append(p.Exercises, p.Exercise) // filtered to one not tried yet: still say which
	}
	for _, s := range all {
		if p.Exercise == "" || s.Exercise == p.Exercise {
			p.Submissions = append(p.Submissions, s)
		}
	}
	pick := func(name string) *records.Submission {
		n, err := strconv.ParseInt(c.QueryParam(name), 10, 64)
		if err != nil {
			return nil
		}
		return byID[n] // only this learner's submissions
	}
	if s := pick("show"); s != nil {
		p.Shown, p.Code = s, report.MarkedCode(s.Code, nil)
		if len(s.Verdict) > 0 {
			p.Verdict, _ = verdict.Decode(s.Verdict) // a verdict that does not decode is not shown
		}
	}
	if a, b := pick("a"), pick("b"); a != nil && b != nil {
		p.DiffA, p.DiffB, p.Diff = a, b, report.Diff(a.Code, b.Code)
	}
	return h.render(c, http.StatusOK, "learner", p)
}
