package web

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// ordered is every exercise as the pages list them: chapter by chapter,
// each chapter in its own order (the catalog's).
func (s *Server) ordered() []*exercise.Exercise {
	var out []*exercise.Exercise
	for _, ch := range s.cat.Chapters {
		out = append(out, ch.Exercises...)
	}
	// Exercises outside any chapter come last.
	for _, e := range byNumber(s.cat.Exercises) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func byNumber(exs []*exercise.Exercise) []*exercise.Exercise {
	out := slices.Clone(exs)
	slices.SortStableFunc(out, func(a, b *exercise.Exercise) int { return cmp.Compare(a.Number, b.Number) })
	return out
}

// next is the exercise to go on with after ex: the next one in the list
// that is not solved yet, else the next one; nil after the last.
func (s *Server) next(ex *exercise.Exercise, progress map[string]string) *exercise.Exercise {
	all := s.ordered()
	i := slices.Index(all, ex)
	if i < 0 {
		return nil
	}
	if progress == nil { // progress unknown: the next in the list
		if i+1 < len(all) {
			return all[i+1]
		}
		return nil
	}
	for _, e := range all[i+1:] {
		if progress[e.Slug] != "solved" {
			return e
		}
	}
	for _, e := range all[:i] {
		if progress[e.Slug] != "solved" {
			return e
		}
	}
	if i+1 < len(all) {
		return all[i+1]
	}
	return nil
}

// firstStep is where a newcomer starts: the first exercise not solved.
func (s *Server) firstStep(progress map[string]string) *exercise.Exercise {
	for _, e := range s.ordered() {
		if progress[e.Slug] != "solved" {
			return e
		}
	}
	return nil
}

// dueDates are the learner's class's due dates by exercise slug; none
// outside a class.
func (s *Server) dueDates(c echo.Context, l *records.Learner) map[string]time.Time {
	if l == nil || l.ClassID == 0 {
		return nil
	}
	due, err := s.db.DueDates(c.Request().Context(), l.ClassID)
	if err != nil {
		s.log.Warn("due dates", "class", l.ClassID, "err", err)
		return nil
	}
	return due
}

// className is the learner's class's name, "" outside one.
func (s *Server) className(c echo.Context, l *records.Learner) string {
	if l == nil || l.ClassID == 0 {
		return ""
	}
	cl, err := s.db.Class(c.Request().Context(), l.ClassID)
	if err != nil {
		s.log.Warn("class of learner", "learner", l.ID, "err", err)
		return ""
	}
	return cl.Name
}

// tocEntry is a heading of a chapter, for its table of contents.
type tocEntry struct {
	ID    string
	Title template.HTML // catalog markup: trusted
	Sub   bool          // an h3 under an h2
}

var reHeading = regexp.MustCompile(`<h([23]) id="([^"]+)">(.*?)</h[23]>`)
var reTag = regexp.MustCompile(`<[^>]*>`)

// tableOfContents lists the h2 and h3 headings of rendered catalog markdown.
func tableOfContents(h template.HTML) []tocEntry {
	var out []tocEntry
	for _, m := range reHeading.FindAllStringSubmatch(string(h), -1) {
		out = append(out, tocEntry{ID: m[2], Title: template.HTML(reTag.ReplaceAllString(m[3], "")), Sub: m[1] == "3"})
	}
	return out
}

// attemptResponse is one past submission, for the history's "View" and
// "Restore code".
type attemptResponse struct {
	ID    int64  `json:"id"`
	When  string `json:"when"` // RFC 3339
	Mode  string `json:"mode"`
	Title string `json:"title"`
	Code  string `json:"code"`
	HTML  string `json:"html"` // the results as the page shows them
}

// handleAttempt sends one of the learner's own submissions: its code and
// its results, rendered. Anyone else's is not found.
func (s *Server) handleAttempt(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return echo.NewHTTPError(http.StatusNotFound, "no such submission")
	}
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	if l == nil {
		return echo.NewHTTPError(http.StatusNotFound, "no such submission")
	}
	sub, err := s.db.Submission(c.Request().Context(), id)
	if errors.Is(err, records.ErrNotFound) || (err == nil && (sub.LearnerID != l.ID || sub.RejudgeOf != 0)) {
		return echo.NewHTTPError(http.StatusNotFound, "no such submission")
	}
	if err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	resp := attemptResponse{ID: sub.ID, When: sub.QueuedAt.UTC().Format(time.RFC3339), Mode: string(sub.Mode), Title: sub.Title(), Code: sub.Code}
	switch {
	case sub.Done() && len(sub.Verdict) > 0:
		v, err := verdict.Decode(sub.Verdict)
		if err != nil {
			return fmt.Errorf("attempt %d: %w", id, err)
		}
		ex, _ := s.cat.Find(sub.Exercise)
		resp.HTML = s.renderPart("results", s.newResults(ex, v, sub.DurationMs))
	case sub.NotJudged():
		resp.HTML = `<p class="muted">` + template.HTMLEscapeString("Not judged: "+sub.Note) + `</p>`
	default:
		resp.HTML = `<p class="muted">Still being judged.</p>`
	}
	c.Response().Header().Set("Cache-Control", "private, no-cache")
	return c.JSON(http.StatusOK, resp)
}

// testNames lists an exercise's test names, for "run only this test".
func testNames(ex *exercise.Exercise) []string {
	if ex == nil || ex.Suite == nil {
		return nil
	}
	out := make([]string, 0, len(ex.Suite.Tests))
	for _, t := range ex.Suite.Tests {
		out = append(out, t.Name)
	}
	return out
}

// onlyTest says which single test a run verdict judged, "" when it judged
// the sample tests: a run of one test that is not the exercise's only
// sample test.
func onlyTest(ex *exercise.Exercise, v *verdict.Verdict) string {
	if v.Mode != verdict.ModeRun || len(v.Tests) != 1 || ex == nil || ex.Suite == nil {
		return ""
	}
	samples := 0
	for _, t := range ex.Suite.Tests {
		if t.Sample {
			samples++
		}
	}
	if t := v.Tests[0]; !t.Sample || samples != 1 {
		return t.Name
	}
	return ""
}

// dueText is a due date for pages without script: UTC, which the script
// replaces with the learner's own time.
func dueText(t time.Time) string {
	return strings.TrimSpace(t.UTC().Format("Mon 2 Jan 2006, 15:04 UTC"))
}

// gzipPages compresses pages and API answers. Static files carry their
// own gzip (assets.go) and event streams must reach the browser event by
// event, so both are skipped.
func gzipPages() echo.MiddlewareFunc {
	return middleware.GzipWithConfig(middleware.GzipConfig{
		Level:     5,
		MinLength: 1024,
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return strings.HasPrefix(p, "/static/") || strings.HasSuffix(p, "/events") ||
				c.Request().Header.Get("Accept") == "text/event-stream"
		},
	})
}
