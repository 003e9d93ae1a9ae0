package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"ctrljudge/judge/records"
)

func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = s.ipExtractor()
	e.Use(middleware.Recover(), securityHeaders, s.secureCookies, middleware.BodyLimit(maxBodySize), csrf())
	e.Use(gzipPages())

	e.GET("/", s.handleHome)
	e.GET("/chapters/:slug", s.handleChapter)
	e.GET("/exercises/:id", s.handleExercise)
	e.GET("/exercises/:id/solution", s.handleSolution)
	e.GET("/exercises/:id/history", s.handleHistory)
	e.GET("/signin", s.handleSignInPage)
	e.POST("/signin", s.handleSignIn, limit(signInBurst, signInEvery, "sign-in attempts"))
	e.POST("/signout", s.handleSignOut)
	e.PUT("/api/exercises/:id/draft", s.handleSaveDraft, limit(draftBurst, draftEvery, "draft saves"))
	e.POST("/api/exercises/:id/submissions", s.handleSubmit, limitWith(s.submitLimit, submitEvery, "submissions"))
	e.GET("/api/submissions/:id/events", s.handleEvents)
	e.GET("/api/submissions/:id", s.handleAttempt)
	e.GET("/static/:name", s.handleStatic)
	e.HEAD("/static/:name", s.handleStatic)
	e.GET("/healthz", s.handleHealth)
	e.HEAD("/healthz", s.handleHealth)
	return e
}

// pageBase is what the layout needs on every page.
type pageBase struct {
	Title   string
	Learner *records.Learner
	CSRF    string
	Path    string
	Class   string // the signed-in learner's class name
}

func (s *Server) base(c echo.Context, l *records.Learner, title string) pageBase {
	return pageBase{Title: title, Learner: l, CSRF: csrfToken(c), Path: c.Request().URL.RequestURI(), Class: s.className(c, l)}
}

// render writes a whole page. Pages are per learner, so never shared caches.
func (s *Server) render(c echo.Context, code int, page string, data any) error {
	t, ok := s.pages[page]
	if !ok {
		return errors.New("no page template " + page)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "private, no-cache")
	return c.HTMLBlob(code, b.Bytes())
}

type errorPage struct {
	pageBase
	Code    int
	Message string
}

// handleError answers API paths with JSON and pages with an error page.
// Internal errors are logged and not shown.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := http.StatusInternalServerError, "something went wrong on our side; please try again"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(code)
		}
	} else {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if code == http.StatusRequestEntityTooLarge && msg == http.StatusText(code) {
		msg = "the request is too large"
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		_ = c.JSON(code, map[string]string{"error": msg})
		return
	}
	l, _ := c.Get(learnerKey).(*records.Learner)
	if err := s.render(c, code, "error", errorPage{pageBase: s.base(c, l, http.StatusText(code)), Code: code, Message: msg}); err != nil {
		_ = c.String(code, msg)
	}
}

func (s *Server) handleHealth(c echo.Context) error {
	code, body := s.health(c.Request().Context())
	return c.JSON(code, body)
}

// health is what /healthz answers, on the public and the metrics address.
func (s *Server) health(ctx context.Context) (int, map[string]any) {
	depth, err := s.q.Depth(ctx)
	if err != nil {
		return http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "the judging queue does not answer"}
	}
	alive, err := s.q.WorkersAlive(ctx)
	if err != nil {
		return http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "the records do not answer"}
	}
	return http.StatusOK, map[string]any{"ok": true, "queued": depth, "workers": alive}
}
