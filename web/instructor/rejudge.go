package instructor

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// pickForRejudge chooses, per learner, the latest or the best of their own
// judged submits of an exercise, skipping those already re-judged at
// version (so pressing the button twice queues nothing new).
func pickForRejudge(subs []*records.Submission, slug, which, version string) []*records.Submission {
	done := map[int64]bool{} // originals already re-judged at this version
	for _, s := range subs {
		if s.RejudgeOf != 0 && s.ExerciseVersion == version && s.State != records.StateNotJudged {
			done[s.RejudgeOf] = true
		}
	}
	pick := map[int64]*records.Submission{}
	var order []int64
	for _, s := range subs { // oldest first
		if s.Exercise != slug || !s.Charged() || s.Mode != verdict.ModeSubmit {
			continue
		}
		cur, seen := pick[s.LearnerID]
		if !seen {
			order = append(order, s.LearnerID)
		}
		if !seen || which == "latest" || betterSub(s, cur) {
			pick[s.LearnerID] = s
		}
	}
	var out []*records.Submission
	for _, id := range order {
		if s := pick[id]; !done[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// betterSub: accepted first, then the larger share of tests passed; the
// earlier wins a tie.
func betterSub(a, b *records.Submission) bool {
	if (a.Outcome == verdict.OutcomeAccepted) != (b.Outcome == verdict.OutcomeAccepted) {
		return a.Outcome == verdict.OutcomeAccepted
	}
	return a.Total > 0 && (b.Total == 0 || a.Passed*b.Total > b.Passed*a.Total)
}

// handleRejudge queues a re-judge of every learner's latest (or best)
// submit of the exercise against its current tests. Old verdicts stay,
// each tagged with the exercise version that produced it.
func (h *handler) handleRejudge(c echo.Context) error {
	cl := class(c)
	ctx := c.Request().Context()
	if h.Catalog == nil || h.Rejudge == nil {
		return echo.NewHTTPError(http.StatusConflict, "no exercise catalog or judge queue: cannot re-judge")
	}
	ex, err := h.Catalog.Find(c.Param("slug"))
	if err != nil || ex.Slug != c.Param("slug") {
		return echo.NewHTTPError(http.StatusNotFound, "this exercise is not in the catalog any more; it cannot be re-judged")
	}
	which := c.FormValue("which")
	if which != "latest" && which != "best" {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "choose latest or best")
	}
	subs, err := h.DB.ClassSubmissions(ctx, cl.ID)
	if err != nil {
		return err
	}
	queued, failed := 0, 0
	for _, orig := range pickForRejudge(subs, ex.Slug, which, ex.Version) {
		ok, err := h.Rejudge(ctx, orig)
		if err != nil {
			return err
		}
		if !ok {
			failed++
			continue
		}
		queued++
	}
	msg := fmt.Sprintf("Queued %d re-judge(s) of the %s submissions against version %s.", queued, which, ex.Version)
	if failed > 0 {
		msg += fmt.Sprintf(" %d could not be queued (the server is busy); press again later.", failed)
	}
	if queued == 0 && failed == 0 {
		msg = "Nothing to re-judge: every " + which + " submission already has a verdict at version " + ex.Version + "."
	}
	return seeOther(c, fmt.Sprintf("/classes/%d/exercises/%s", cl.ID, ex.Slug), msg)
}
