package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// historyLimit is how many past submissions the exercise page lists.
const historyLimit = 20

// exerciseRow is one line of an exercise list.
type exerciseRow struct {
	Ex     *exercise.Exercise
	Status string    // "", tried, solved
	Hidden bool      // filtered out (server side, for pages without script)
	Due    time.Time // the class's due date; zero when none
}

// DueISO and DueText are the due date for the page's script (which shows
// it in the learner's time zone) and for pages without script.
func (r exerciseRow) DueISO() string  { return r.Due.UTC().Format(time.RFC3339) }
func (r exerciseRow) DueText() string { return dueText(r.Due) }

// StatusWord is the status as shown.
func (r exerciseRow) StatusWord() string {
	switch r.Status {
	case "solved":
		return "solved"
	case "tried":
		return "tried"
	}
	return "not started"
}

type chapterRows struct {
	Chapter *exercise.Chapter
	Rows    []exerciseRow
}

type filters struct{ Q, Difficulty, Status string }

func (f filters) match(r exerciseRow) bool {
	if f.Difficulty != "" && r.Ex.Difficulty != f.Difficulty {
		return false
	}
	if f.Status != "" && strings.ReplaceAll(r.StatusWord(), " ", "-") != f.Status {
		return false
	}
	if q := strings.ToLower(strings.TrimSpace(f.Q)); q != "" {
		hay := strings.ToLower(fmt.Sprintf("%d %s %s %s", r.Ex.Number, r.Ex.Title, r.Ex.Slug, strings.Join(r.Ex.Tags, " ")))
		if !strings.Contains(hay, q) {
			return false
		}
	}
	return true
}

type homePage struct {
	pageBase
	Chapters      []chapterRows
	Solved, Total int
	Filters       filters
	Tried         bool               // the learner has tried something
	FirstStep     *exercise.Exercise // where to start, or go on; nil once all are solved
	FirstChapter  *exercise.Chapter
}

// rows lists exercises in the order given (a chapter's own) with the
// learner's status and due dates.
func (s *Server) rows(exs []*exercise.Exercise, progress map[string]string, due map[string]time.Time, f filters) []exerciseRow {
	rows := make([]exerciseRow, 0, len(exs))
	for _, e := range exs {
		r := exerciseRow{Ex: e, Status: progress[e.Slug], Due: due[e.Slug]}
		r.Hidden = !f.match(r)
		rows = append(rows, r)
	}
	return rows
}

// handleHome lists chapters and exercises with the learner's progress.
func (s *Server) handleHome(c echo.Context) error {
	l, err := s.learner(c, false) // a page view creates no learner
	if err != nil {
		return err
	}
	progress, err := s.db.Progress(c.Request().Context(), learnerID(l))
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	f := filters{Q: c.QueryParam("q"), Difficulty: c.QueryParam("difficulty"), Status: c.QueryParam("status")}
	p := homePage{pageBase: s.base(c, l, "Exercises"), Filters: f, Total: len(s.cat.Exercises),
		Tried: len(progress) > 0, FirstStep: s.firstStep(progress)}
	due := s.dueDates(c, l)
	for _, ch := range s.cat.Chapters {
		p.Chapters = append(p.Chapters, chapterRows{Chapter: ch, Rows: s.rows(ch.Exercises, progress, due, f)})
	}
	if p.FirstStep != nil {
		p.FirstChapter = s.cat.Chapter(p.FirstStep.Chapter)
	}
	for _, e := range s.cat.Exercises {
		if progress[e.Slug] == "solved" {
			p.Solved++
		}
	}
	return s.render(c, http.StatusOK, "home", p)
}

type chapterPage struct {
	pageBase
	Chapter chapterRows
	Body    template.HTML
	TOC     []tocEntry
}

// handleChapter shows a chapter and its exercises.
func (s *Server) handleChapter(c echo.Context) error {
	ch := s.cat.Chapter(c.Param("slug"))
	if ch == nil {
		return echo.NewHTTPError(http.StatusNotFound, "no such chapter")
	}
	l, err := s.learner(c, false) // a page view creates no learner
	if err != nil {
		return err
	}
	progress, err := s.db.Progress(c.Request().Context(), learnerID(l))
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return s.render(c, http.StatusOK, "chapter", chapterPage{
		pageBase: s.base(c, l, ch.Title),
		Chapter:  chapterRows{Chapter: ch, Rows: s.rows(ch.Exercises, progress, s.dueDates(c, l), filters{})},
		Body:     s.docs.chapter[ch.Slug],
		TOC:      tableOfContents(s.docs.chapter[ch.Slug]),
	})
}

// exercise finds the exercise named in the path, or answers 404.
func (s *Server) exercise(c echo.Context) (*exercise.Exercise, error) {
	id := c.Param("id")
	if len(id) > 80 {
		return nil, echo.NewHTTPError(http.StatusNotFound, "no such exercise")
	}
	e, err := s.cat.Find(id)
	if err != nil {
		return nil, echo.NewHTTPError(http.StatusNotFound, "no such exercise: "+id)
	}
	return e, nil
}

// pageData reaches the page's script as JSON (no inline script runs).
type pageData struct {
	ID       string `json:"id"`
	Slug     string `json:"slug"`
	FileName string `json:"fileName"`
	Starter  string `json:"starter"`
	Draft    string `json:"draft"`
	CSRF     string `json:"csrf"`
	Pending  int64  `json:"pending,omitempty"` // a submission still being judged
	Solved   bool   `json:"solved"`
}

type exercisePage struct {
	pageBase
	Ex        *exercise.Exercise
	Chapter   *exercise.Chapter
	Statement template.HTML
	Solution  *solutionPart // nil until solved: never sent before
	History   []*records.Submission
	Last      *results
	Data      template.JS
	Commands  []string
	Due       exerciseRow // its due date in the learner's class, if any
	Next      *exercise.Exercise
}

type solutionPart struct {
	Explanation, Code template.HTML
}

// handleExercise shows the statement, the editor with the learner's draft,
// their history and their latest result.
func (s *Server) handleExercise(c echo.Context) error {
	ex, err := s.exercise(c)
	if err != nil {
		return err
	}
	l, err := s.learner(c, false) // a page view creates no learner
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	progress, err := s.db.Progress(ctx, learnerID(l))
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	draft, ok, err := s.db.Draft(ctx, learnerID(l), ex.Slug)
	if err != nil {
		return fmt.Errorf("draft: %w", err)
	}
	if !ok {
		draft = string(ex.Starter)
	}
	history, err := s.db.Submissions(ctx, learnerID(l), ex.Slug, historyLimit)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	solved := progress[ex.Slug] == "solved"
	data := pageData{ID: ex.ID(), Slug: ex.Slug, FileName: ex.FileName(), Starter: string(ex.Starter),
		Draft: draft, CSRF: csrfToken(c), Solved: solved}
	p := exercisePage{
		pageBase:  s.base(c, l, fmt.Sprintf("%d. %s", ex.Number, ex.Title)),
		Ex:        ex,
		Chapter:   s.cat.Chapter(ex.Chapter),
		Statement: s.docs.statement[ex.Slug],
		History:   history,
		Commands:  localCommands(ex),
		Next:      s.next(ex, progress),
	}
	if due := s.dueDates(c, l); !due[ex.Slug].IsZero() {
		p.Due = exerciseRow{Ex: ex, Due: due[ex.Slug]}
	}
	if solved {
		p.Solution = s.solution(ex)
	}
	for _, sub := range history {
		if sub.State == records.StateQueued || sub.State == records.StateRunning {
			if data.Pending == 0 {
				data.Pending = sub.ID
			}
			continue
		}
		if sub.Done() && len(sub.Verdict) > 0 {
			if v, err := verdict.Decode(sub.Verdict); err == nil {
				r := s.newResults(ex, v, sub.DurationMs)
				if r.Next != nil {
					r.Next = p.Next
				}
				p.Last = &r
			}
		}
		break
	}
	js, err := json.Marshal(data)
	if err != nil {
		return err
	}
	// JSON inside <script type="application/json">: escape what could end
	// the element early.
	p.Data = template.JS(strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(string(js)))
	return s.render(c, http.StatusOK, "exercise", p)
}

func (s *Server) solution(ex *exercise.Exercise) *solutionPart {
	return &solutionPart{Explanation: s.docs.explanation[ex.Slug], Code: s.docs.solution[ex.Slug]}
}

// localCommands are the judge commands for the learner's own machine: a
// workspace, the sample tests, every test, another seed. judge test finds
// the file in the workspace folder (or the current one).
func localCommands(ex *exercise.Exercise) []string {
	return []string{
		fmt.Sprintf("judge start %s", ex.ID()),
		fmt.Sprintf("judge test %s --run", ex.ID()),
		fmt.Sprintf("judge test %s", ex.ID()),
		fmt.Sprintf("judge test %s --seed 7", ex.ID()),
	}
}

// handleSolution sends the explanation and reference solution, only to a
// learner who has passed the exercise with Submit.
func (s *Server) handleSolution(c echo.Context) error {
	ex, err := s.exercise(c)
	if err != nil {
		return err
	}
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	if l != nil {
		progress, err := s.db.Progress(c.Request().Context(), learnerID(l))
		if err != nil {
			return fmt.Errorf("progress: %w", err)
		}
		if progress[ex.Slug] == "solved" {
			c.Response().Header().Set("Cache-Control", "private, no-cache")
			return c.HTML(http.StatusOK, s.renderPart("solution", s.solution(ex)))
		}
	}
	return echo.NewHTTPError(http.StatusForbidden, "the solution unlocks once Submit passes every test")
}

// handleHistory sends the learner's submission list for an exercise.
func (s *Server) handleHistory(c echo.Context) error {
	ex, err := s.exercise(c)
	if err != nil {
		return err
	}
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	var history []*records.Submission
	if l != nil {
		if history, err = s.db.Submissions(c.Request().Context(), l.ID, ex.Slug, historyLimit); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	c.Response().Header().Set("Cache-Control", "private, no-cache")
	return c.HTML(http.StatusOK, s.renderPart("history", history))
}
