package instructor

import (
	"errors"
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
}

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
	p := learnerPage{page: h.page(c, l.Name+" · "+cl.Name), Learner: l, Exercise: c.QueryParam("exercise")}
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
