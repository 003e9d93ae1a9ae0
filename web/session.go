package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
)

const (
	sessionCookie = "cj_session"
	sessionMaxAge = 60 * 24 * time.Hour // as long as the store keeps a learner's session
)

const learnerKey = "learner"

// learner returns the learner holding the request's session. With create,
// a request without a valid session gets a new anonymous learner and its
// cookie; without, it gets nil.
func (s *Server) learner(c echo.Context, create bool) (*records.Learner, error) {
	if l, ok := c.Get(learnerKey).(*records.Learner); ok {
		return l, nil
	}
	ctx := c.Request().Context()
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		l, err := s.db.LearnerBySession(ctx, ck.Value)
		switch {
		case err == nil:
			c.Set(learnerKey, l)
			return l, nil
		case !errors.Is(err, records.ErrNotFound):
			return nil, fmt.Errorf("look up session: %w", err)
		}
	}
	if !create {
		return nil, nil
	}
	l, token, err := s.db.NewAnonymousLearner(ctx)
	if err != nil {
		return nil, fmt.Errorf("new learner: %w", err)
	}
	s.setSession(c, token)
	c.Set(learnerKey, l)
	return l, nil
}

// learnerID is 0, which matches no records, for a visitor who has not
// saved or submitted anything yet.
func learnerID(l *records.Learner) int64 {
	if l == nil {
		return 0
	}
	return l.ID
}

func (s *Server) setSession(c echo.Context, token string) {
	c.SetCookie(&http.Cookie{
		Name: sessionCookie, Value: token, Path: "/",
		MaxAge: int(sessionMaxAge / time.Second), HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secure(c),
	})
}

type signInPage struct {
	pageBase
	Name, Next, Error string
	Code              string // the join code, filled in from a join link (?code=)
}

// handleSignInPage shows the sign-in form.
func (s *Server) handleSignInPage(c echo.Context) error {
	l, err := s.learner(c, false)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "signin", signInPage{pageBase: s.base(c, l, "Sign in"), Next: localPath(c.QueryParam("next")),
		Code: records.NormalizeJoinCode(c.QueryParam("code"))})
}

// handleSignIn signs a learner in with a display name and a class join
// code, replacing the session cookie.
func (s *Server) handleSignIn(c echo.Context) error {
	name := strings.TrimSpace(c.FormValue("name"))
	code := strings.TrimSpace(c.FormValue("code"))
	next := localPath(c.FormValue("next"))
	fail := func(msg string) error {
		// A failed sign-in creates nothing: a flood of wrong codes would
		// otherwise leave a learner row each.
		l, err := s.learner(c, false)
		if err != nil {
			return err
		}
		return s.render(c, http.StatusUnprocessableEntity, "signin",
			signInPage{pageBase: s.base(c, l, "Sign in"), Name: name, Next: next, Error: msg, Code: code})
	}
	if name == "" {
		return fail("Enter the name your instructor will see.")
	}
	if _, err := records.CleanName(name); err != nil {
		return fail("A name is 1 to 64 characters, with no control characters.")
	}
	if code == "" {
		return fail("Enter your class's join code, or practise anonymously.")
	}
	// What this browser practised anonymously comes along: its
	// submissions, drafts and progress join the named learner's (a named
	// learner's session is never merged into another).
	prev, err := s.learner(c, false)
	if err != nil {
		return err
	}
	var anonID int64
	if prev != nil && prev.Name == "" && prev.ClassID == 0 {
		anonID = prev.ID
	}
	l, token, _, err := s.db.JoinClass(c.Request().Context(), name, code, anonID)
	if errors.Is(err, records.ErrBadJoinCode) {
		return fail("No class has that join code. Check it with your instructor.")
	}
	if err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	s.endSession(c)
	s.setSession(c, token)
	c.Set(learnerKey, l)
	return c.Redirect(http.StatusSeeOther, next)
}

// handleSignOut ends the session; the next page view starts an anonymous one.
func (s *Server) handleSignOut(c echo.Context) error {
	s.endSession(c)
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secure(c)})
	return c.Redirect(http.StatusSeeOther, "/")
}

func (s *Server) endSession(c echo.Context) {
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		if err := s.db.EndSession(c.Request().Context(), ck.Value); err != nil && !errors.Is(err, records.ErrNotFound) {
			s.log.Warn("end session", "err", err)
		}
	}
}

// localPath keeps redirect targets on this site.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || p == "" || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") ||
		strings.HasPrefix(p, "/\\") || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return p
}
