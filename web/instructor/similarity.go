package instructor

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
	"ctrljudge/judge/report"
)

type similarityPage struct {
	page
	Report *report.Report
}

// handleSimilarity lists the class's similar pairs.
func (h *handler) handleSimilarity(c echo.Context) error {
	cl := class(c)
	r, _, err := h.loadReport(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "similarity", similarityPage{page: h.page(c, "Similar code · "+cl.Name), Report: r})
}

type pairPage struct {
	page
	A, B             *records.Submission // B is nil for the reference solution
	NameA, NameB     string
	Left, Right      []report.CodeLine
	SharedA, SharedB int // marked lines
}

// handlePair shows two submissions side by side, lines sharing
// fingerprints marked. Any two submissions of the class's learners for
// the same exercise can be compared, listed as a pair or not.
func (h *handler) handlePair(c echo.Context) error {
	cl := class(c)
	load := func(param string) (*records.Submission, *records.Learner, error) {
		return h.classSubmission(c, cl, param)
	}
	a, la, err := load("a")
	if err != nil {
		return err
	}
	b, lb, err := load("b")
	if err != nil {
		return err
	}
	if a.Exercise != b.Exercise {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "the two submissions are for different exercises")
	}
	var starter []byte
	if h.Catalog != nil {
		if ex, err := h.Catalog.Find(a.Exercise); err == nil && ex.Slug == a.Exercise {
			starter = ex.Starter
		}
	}
	ma, mb := report.SharedLines([]byte(a.Code), []byte(b.Code), starter)
	p := pairPage{page: h.page(c, "Side by side · "+cl.Name), A: a, B: b, NameA: la.Name, NameB: lb.Name,
		Left: report.MarkedCode(a.Code, ma), Right: report.MarkedCode(b.Code, mb), SharedA: len(ma), SharedB: len(mb)}
	return h.render(c, http.StatusOK, "pair", p)
}

// classSubmission loads the submission named by param, if a learner of cl sent it.
func (h *handler) classSubmission(c echo.Context, cl *records.Class, param string) (*records.Submission, *records.Learner, error) {
	ctx := c.Request().Context()
	id, err := strconv.ParseInt(c.Param(param), 10, 64)
	if err != nil {
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, "no such submission")
	}
	s, err := h.DB.Submission(ctx, id)
	if err != nil || s.ClassID != cl.ID {
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, "no such submission in this class")
	}
	l, err := h.DB.Learner(ctx, s.LearnerID)
	if err != nil {
		return nil, nil, err
	}
	return s, l, nil
}

// handleReference shows a submission beside its exercise's reference
// solution, lines sharing fingerprints marked (starter code excluded).
func (h *handler) handleReference(c echo.Context) error {
	cl := class(c)
	a, la, err := h.classSubmission(c, cl, "a")
	if err != nil {
		return err
	}
	if h.Catalog == nil {
		return echo.NewHTTPError(http.StatusNotFound, "no exercise catalog: no reference solution to compare with")
	}
	ex, err := h.Catalog.Find(a.Exercise)
	if err != nil || ex.Slug != a.Exercise || len(ex.Solution) == 0 {
		return echo.NewHTTPError(http.StatusNotFound, "this exercise has no reference solution in the catalog")
	}
	ma, mb := report.SharedLines([]byte(a.Code), ex.Solution, ex.Starter)
	p := pairPage{page: h.page(c, "Beside the reference · "+cl.Name), A: a, NameA: la.Name, NameB: "Reference solution",
		Left: report.MarkedCode(a.Code, ma), Right: report.MarkedCode(string(ex.Solution), mb), SharedA: len(ma), SharedB: len(mb)}
	return h.render(c, http.StatusOK, "pair", p)
}
