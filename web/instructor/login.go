package instructor

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/records"
)

type loginPage struct {
	page
	Name, Next, Error string
}

// handleLoginPage shows the sign-in form.
func (h *handler) handleLoginPage(c echo.Context) error {
	return h.render(c, http.StatusOK, "login", loginPage{page: h.page(c, "Instructor sign-in"), Next: c.QueryParam("next")})
}

// handleLogin checks a name and password and sets a session cookie kept
// from other sites (SameSite=Strict).
func (h *handler) handleLogin(c echo.Context) error {
	name, password := strings.TrimSpace(c.FormValue("name")), c.FormValue("password")
	next := h.localNext(c, c.FormValue("next"))
	addr := h.ClientKey(c)
	if r := h.guard.begin(name, addr); r.refused() {
		return h.refuse(c, name, next, r)
	}
	_, token, err := h.DB.SignInInstructor(c.Request().Context(), name, password)
	if errors.Is(err, records.ErrBadPassword) {
		return h.render(c, http.StatusUnauthorized, "login", loginPage{page: h.page(c, "Instructor sign-in"),
			Name: name, Next: next, Error: "Wrong name or password."})
	}
	if err != nil {
		return err
	}
	h.guard.succeed(name, addr)
	h.endSession(c)
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.IsTLS()})
	return c.Redirect(http.StatusSeeOther, next)
}

// handleLogout ends the session.
func (h *handler) handleLogout(c echo.Context) error {
	h.endSession(c)
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.IsTLS()})
	return c.Redirect(http.StatusSeeOther, base(c)+"/login")
}

func (h *handler) endSession(c echo.Context) {
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		if err := h.DB.EndSession(c.Request().Context(), ck.Value); err != nil {
			h.log.Warn("end instructor session", "err", err)
		}
	}
}

// localNext keeps the post-sign-in redirect inside the instructor pages.
func (h *handler) localNext(c echo.Context, next string) string {
	b := base(c)
	if strings.HasPrefix(next, b+"/") && !strings.Contains(next, "//") && !strings.Contains(next, `\`) {
		return next
	}
	return b + "/"
}
