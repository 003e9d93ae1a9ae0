package instructor

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
	"ctrljudge/judge/report"
)

type classesPage struct {
	page
	Classes []*records.Class
	Name    string
	Error   string
}

// handleClasses lists the instructor's classes, with a form for a new one.
func (h *handler) handleClasses(c echo.Context) error {
	cs, err := h.DB.InstructorClasses(c.Request().Context(), instructor(c).ID)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "classes", classesPage{page: h.page(c, "Your classes"), Classes: cs})
}

// handleCreateClass creates a class with a fresh join code.
func (h *handler) handleCreateClass(c echo.Context) error {
	ctx := c.Request().Context()
	cl, err := h.DB.CreateClass(ctx, instructor(c).ID, c.FormValue("name"))
	if errors.Is(err, records.ErrBadName) {
		cs, lerr := h.DB.InstructorClasses(ctx, instructor(c).ID)
		if lerr != nil {
			return lerr
		}
		return h.render(c, http.StatusUnprocessableEntity, "classes", classesPage{page: h.page(c, "Your classes"), Classes: cs,
			Name: c.FormValue("name"), Error: "A class name needs 1 to 64 characters, without control characters."})
	}
	if err != nil {
		return err
	}
	return seeOther(c, fmt.Sprintf("/classes/%d", cl.ID), "Class created. Learners join with code "+cl.JoinCode+
		", or hand out the join link "+h.joinLink(c, cl)+".")
}

type matrixPage struct {
	page
	Report   *report.Report
	Sort     string
	Desc     bool
	Rows     []*report.LearnerRow
	JoinLink string // the sign-in page with the class's code filled in
}

// Columns is how many columns the matrix has.
func (p matrixPage) Columns() int { return 3 + len(p.Report.Exercises) }

// LearnerLink is a learner's page, filtered to one exercise if given.
func (p matrixPage) LearnerLink(learner int64, exercise string) string {
	return link(fmt.Sprintf("%s/classes/%d/learners/%d", p.Base, p.Class.ID, learner), "exercise", exercise)
}

// ShowLink opens one submission on its learner's page.
func (p matrixPage) ShowLink(learner int64, exercise string, submission int64) string {
	return link(fmt.Sprintf("%s/classes/%d/learners/%d", p.Base, p.Class.ID, learner), "exercise", exercise,
		"show", strconv.FormatInt(submission, 10))
}

// SortLink is the query for sorting by key: the same key flips the order.
func (p matrixPage) SortLink(key string) string {
	desc := key != "name" // numbers read best largest first
	if p.Sort == key {
		desc = !p.Desc
	}
	d := "0"
	if desc {
		d = "1"
	}
	return "?sort=" + key + "&desc=" + d
}

// SortMark shows the current sort on a column heading.
func (p matrixPage) SortMark(key string) string {
	if p.Sort != key {
		return ""
	}
	if p.Desc {
		return " ▼"
	}
	return " ▲"
}

var statusRank = map[string]int{report.StatusNotStarted: 0, report.StatusAttempted: 1, report.StatusSolvedLate: 2, report.StatusSolved: 3}

// sortRows orders the matrix by name, solved count, attempts, or one
// exercise (status, then best score, then fewer attempts); names break ties.
func sortRows(r *report.Report, key string, desc bool) []*report.LearnerRow {
	rows := slices.Clone(r.Learners)
	col := -1
	for i, e := range r.Exercises {
		if e.Slug == key {
			col = i
		}
	}
	score := func(c *report.Cell) float64 {
		if c.Best == nil {
			return -1
		}
		return c.Best.Score()
	}
	byName := func(a, b *report.LearnerRow) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	}
	slices.SortStableFunc(rows, func(a, b *report.LearnerRow) int {
		var k int
		switch {
		case key == "solved":
			k = cmp.Or(cmp.Compare(a.Solved, b.Solved), cmp.Compare(b.Attempts, a.Attempts))
		case key == "attempts":
			k = cmp.Compare(a.Attempts, b.Attempts)
		case col >= 0:
			ca, cb := a.Cells[col], b.Cells[col]
			k = cmp.Or(cmp.Compare(statusRank[ca.Status], statusRank[cb.Status]), cmp.Compare(score(ca), score(cb)),
				cmp.Compare(cb.Attempts, ca.Attempts))
		default:
			k = byName(a, b)
		}
		if desc {
			k = -k
		}
		return cmp.Or(k, byName(a, b))
	})
	return rows
}

// handleMatrix shows the class matrix, sorted by ?sort= (name, solved,
// attempts or an exercise slug) and ?desc=1.
func (h *handler) handleMatrix(c echo.Context) error {
	cl := class(c)
	r, _, err := h.loadReport(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	key := c.QueryParam("sort")
	valid := key == "name" || key == "solved" || key == "attempts"
	for _, e := range r.Exercises {
		valid = valid || e.Slug == key
	}
	if !valid {
		key = "name"
	}
	desc := c.QueryParam("desc") == "1"
	return h.render(c, http.StatusOK, "matrix", matrixPage{page: h.page(c, cl.Name), Report: r, Sort: key, Desc: desc,
		Rows: sortRows(r, key, desc), JoinLink: h.joinLink(c, cl)})
}

// dueLayout is what the due-date form's datetime-local input holds. The
// page's script reads it in the browser's time zone and sends the instant
// as due_utc (RFC 3339); without the script, due is read as UTC.
const dueLayout = "2006-01-02T15:04"

// parseDue reads the due-date form: due_utc if the script sent it, else
// due as UTC; zero clears the date.
func parseDue(due, dueUTC string) (time.Time, error) {
	due, dueUTC = strings.TrimSpace(due), strings.TrimSpace(dueUTC)
	switch {
	case dueUTC != "":
		t, err := time.Parse(time.RFC3339Nano, dueUTC)
		if err != nil {
			return time.Time{}, err
		}
		return t.UTC().Truncate(time.Minute), nil
	case due != "":
		return time.ParseInLocation(dueLayout, due, time.UTC)
	}
	return time.Time{}, nil
}

// handleSetDue sets or clears an exercise's due date.
func (h *handler) handleSetDue(c echo.Context) error {
	cl := class(c)
	slug := c.FormValue("exercise")
	if !h.knownExercise(c, cl, slug) {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "no such exercise in this class")
	}
	due, err := parseDue(c.FormValue("due"), c.FormValue("due_utc"))
	if err != nil {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "a due date looks like 2026-03-01T17:00 (UTC)")
	}
	if err := h.DB.SetDueDate(c.Request().Context(), cl.ID, slug, due); err != nil {
		return err
	}
	msg := "Due date for " + slug + " cleared."
	if !due.IsZero() {
		msg = "Due date for " + slug + " set to " + due.Format("2006-01-02 15:04") + " UTC"
		if loc, err := time.LoadLocation(c.FormValue("tz")); err == nil && loc != time.UTC && c.FormValue("tz") != "" {
			msg += " (" + due.In(loc).Format("2006-01-02 15:04 MST") + ", " + loc.String() + ")"
		}
		msg += "."
	}
	return seeOther(c, fmt.Sprintf("/classes/%d", cl.ID), msg)
}

// knownExercise: in the catalog, or seen in the class's records.
func (h *handler) knownExercise(c echo.Context, cl *records.Class, slug string) bool {
	if slug == "" {
		return false
	}
	if h.Catalog != nil {
		for _, e := range h.Catalog.Exercises {
			if e.Slug == slug {
				return true
			}
		}
	}
	r, _, err := h.loadReport(c.Request().Context(), cl)
	if err != nil {
		return false
	}
	for _, e := range r.Exercises {
		if e.Slug == slug {
			return true
		}
	}
	return false
}
