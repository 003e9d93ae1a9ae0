package web

import (
	"net/http"

	"ctrljudge/sandbox"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// maxBodySize bounds every request body; maxCodeSize is the build's own
// limit on the learner's file, refused here before it queues.
const (
	maxBodySize = "128K"
	maxCodeSize = sandbox.MaxSourceBytes
)

// contentSecurityPolicy allows only our own scripts, styles and
// connections; no inline script, style attribute or handler runs.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// csrfCookie names the double-submit token's cookie; csrfHeader and
// csrfField carry the token back.
const (
	csrfCookie  = "cj_csrf"
	csrfHeader  = "X-CSRF-Token"
	csrfField   = "_csrf"
	csrfContext = "csrf"
)

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		return next(c)
	}
}

// csrf refuses state-changing requests from other sites (by Sec-Fetch-Site)
// and, from clients that send no such header, those without the token.
func csrf() echo.MiddlewareFunc {
	return middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "header:" + csrfHeader + ",form:" + csrfField,
		ContextKey:     csrfContext,
		CookieName:     csrfCookie,
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSameSite: http.SameSiteLaxMode,
		ErrorHandler: func(err error, c echo.Context) error {
			return echo.NewHTTPError(http.StatusForbidden, "refused: cross-site request or missing CSRF token; reload the page and try again")
		},
	})
}

func csrfToken(c echo.Context) string {
	t, _ := c.Get(csrfContext).(string)
	return t
}
