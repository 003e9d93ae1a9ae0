package instructor

import (
	"html/template"
	"net/http"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/report"
)

type exercisePage struct {
	page
	Exercise  report.ExerciseInfo
	Analytics *report.Analytics
	Charts    struct{ Attempts, Outcomes, Tests, Oracles, Faults template.HTML }
	// CanRejudge: the exercise is in the catalog.
	CanRejudge bool
	Version    string
}

// handleExercise shows one exercise's analytics and the re-judge form.
func (h *handler) handleExercise(c echo.Context) error {
	cl := class(c)
	r, _, err := h.loadReport(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	slug := c.Param("slug")
	for i, e := range r.Exercises {
		if e.Slug != slug {
			continue
		}
		a := r.Analytics[i]
		p := exercisePage{page: h.page(c, e.Label()+" · "+cl.Name), Exercise: e, Analytics: a}
		p.Charts.Attempts = report.Histogram("Submits needed to solve", a.AttemptsToSolve)
		p.Charts.Outcomes = report.HBarChart("Outcomes", report.OutcomeBars(a.Outcomes))
		p.Charts.Tests = report.HBarChart("Failing tests", report.CountBars(a.FailingTests))
		p.Charts.Oracles = report.HBarChart("Failing oracles", report.CountBars(a.FailingOracles))
		p.Charts.Faults = report.HBarChart("Failing fault classes", report.CountBars(a.FailingFaultClasses))
		if h.Catalog != nil {
			if ex, err := h.Catalog.Find(slug); err == nil && ex.Slug == slug {
				p.CanRejudge, p.Version = true, ex.Version
			}
		}
		return h.render(c, http.StatusOK, "exercise", p)
	}
	return echo.NewHTTPError(http.StatusNotFound, "no such exercise in this class")
}
