package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge"
	"ctrljudge/judge/queue"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// retryAfterSeconds is what a refused submission is told to wait.
const retryAfterSeconds = 5

type codeRequest struct {
	Code string `json:"code"`
	Mode string `json:"mode"` // submissions only: run or submit
	// Only, with mode run, judges just the test with this name, faults
	// included, as a run: it never solves the exercise.
	Only string `json:"only,omitempty"`
}

// readCode decodes a JSON body holding code and checks its size.
func readCode(c echo.Context) (*codeRequest, error) {
	var req codeRequest
	if err := c.Bind(&req); err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return nil, err
		}
		return nil, echo.NewHTTPError(http.StatusBadRequest, "the body must be JSON: {\"code\": \"...\"}")
	}
	if len(req.Code) > maxCodeSize {
		return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("the code is %d KiB; the judge takes at most %d KiB", len(req.Code)>>10, maxCodeSize>>10))
	}
	if !utf8.ValidString(req.Code) {
		return nil, echo.NewHTTPError(http.StatusBadRequest, "the code is not valid UTF-8")
	}
	return &req, nil
}

// draftResponse answers a draft that the server did not keep.
type draftResponse struct {
	Stored bool   `json:"stored"`
	Note   string `json:"note"`
}

// handleSaveDraft keeps the learner's code for the exercise: 204 once
// stored. A visitor without a session gets 200 with stored false: a draft
// alone makes no learner (a flood of cookie-less saves would fill the
// table), and the page keeps it in the browser until the first Run or
// Submit makes one.
func (s *Server) handleSaveDraft(c echo.Context) error {
	ex, err := s.exercise(c)
	if err != nil {
		return err
	}
	req, err := readCode(c)
	if err != nil {
		return err
	}
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	if l == nil {
		return c.JSON(http.StatusOK, draftResponse{Note: "kept in this browser until your first Run or Submit"})
	}
	if err := s.db.SaveDraft(c.Request().Context(), l.ID, ex.Slug, req.Code); err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

type submitResponse struct {
	ID       int64  `json:"id"`
	Events   string `json:"events"`
	Position int    `json:"position"`
}

// handleSubmit queues code for judging: mode "run" judges the sample tests,
// "submit" every test. It answers 202 with the event stream's address, or
// 429 with Retry-After when the queue is full.
func (s *Server) handleSubmit(c echo.Context) error {
	ex, err := s.exercise(c)
	if err != nil {
		return err
	}
	req, err := readCode(c)
	if err != nil {
		return err
	}
	mode := verdict.Mode(req.Mode)
	if mode != verdict.ModeRun && mode != verdict.ModeSubmit {
		return echo.NewHTTPError(http.StatusBadRequest, `mode must be "run" or "submit"`)
	}
	if req.Only != "" {
		if mode != verdict.ModeRun {
			return echo.NewHTTPError(http.StatusBadRequest, `"only" goes with mode "run": one test never solves an exercise`)
		}
		if !slices.Contains(testNames(ex), req.Only) && !ex.IsGeneratedTest(req.Only) {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("exercise %d has no test named %q", ex.Number, clipName(req.Only)))
		}
	}
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// The code judged is the draft from now on.
	if l != nil {
		if err := s.db.SaveDraft(ctx, l.ID, ex.Slug, req.Code); err != nil {
			return fmt.Errorf("save draft: %w", err)
		}
	}
	addr := clientKey(c)
	switch err := s.q.Admit(learnerID(l), addr); {
	case errors.Is(err, queue.ErrClosed):
		c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		return echo.NewHTTPError(http.StatusServiceUnavailable, err.Error())
	case err != nil:
		c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		return echo.NewHTTPError(http.StatusTooManyRequests, err.Error())
	}
	if l == nil {
		// Only an admitted submission makes a learner, so refusals leave
		// no rows behind.
		if l, err = s.learner(c, true); err != nil {
			s.q.Cancel(0, addr)
			return err
		}
		s.q.Adopt(l.ID)
		if err := s.db.SaveDraft(ctx, l.ID, ex.Slug, req.Code); err != nil {
			s.q.Cancel(l.ID, addr)
			return fmt.Errorf("save draft: %w", err)
		}
	}
	sub := &records.Submission{
		LearnerID: l.ID, ClassID: l.ClassID, Exercise: ex.Slug, ExerciseVersion: ex.Version,
		Engine: judge.EngineVersion, Mode: mode, Code: req.Code, Seed: judge.DefaultSeed,
	}
	if err := s.db.CreateSubmission(ctx, sub); err != nil {
		s.q.Cancel(l.ID, addr)
		return fmt.Errorf("create submission: %w", err)
	}
	j := s.q.Push(sub.ID, l.ID, addr, req.Only)
	return c.JSON(http.StatusAccepted, submitResponse{ID: sub.ID, Events: eventsURL(sub.ID), Position: s.q.Position(j)})
}

func eventsURL(id int64) string { return "/api/submissions/" + strconv.FormatInt(id, 10) + "/events" }

// clipName keeps an unknown test name short in an error message.
func clipName(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
