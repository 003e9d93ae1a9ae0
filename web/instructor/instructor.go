// Package instructor serves the instructor pages: sign-in, classes with
// join codes and due dates, the class matrix, per-exercise analytics with
// re-judging, per-learner history with diffs, similar-code review and
// report exports. Every route but sign-in and the stylesheet needs an
// instructor session (401 without), and a class belongs to the instructor
// who created it (403 for anyone else).
package instructor

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // due dates are confirmed in the instructor's zone, wherever the server runs

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/report"
)

// Deps are what the pages need from the rest of the server.
type Deps struct {
	DB      *records.DB
	Catalog *exercise.Catalog
	// Rejudge records a re-judge of orig, a learner's judged submit,
	// against its exercise as it is now and queues it; queued is false
	// when the queue refused it (it is then settled as not judged), err
	// is for the records. Without it (or without a Catalog) nothing can
	// be re-judged.
	Rejudge func(ctx context.Context, orig *records.Submission) (queued bool, err error)
	// ClientKey names the client's address for the sign-in lockout; nil
	// means c.RealIP().
	ClientKey func(echo.Context) string
	// SignInLimit, if set, guards POST /login (a limit per address).
	SignInLimit echo.MiddlewareFunc
	// SiteURL is the learner site's address as browsers reach it, without
	// a trailing slash (the server's public URL if set, else the
	// request's scheme and host); join links start with it. nil means the
	// request's host over http, or https for a TLS request.
	SiteURL func(echo.Context) string
}

const (
	sessionCookie = "cj_instructor"
	// csrfContext is where the web server's CSRF middleware leaves its token.
	csrfContext = "csrf"
	csrfField   = "_csrf"
	cssName     = "instructor.css"
	jsName      = "instructor.js"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/instructor.css
var css []byte

//go:embed static/instructor.js
var js []byte

type handler struct {
	Deps
	pages map[string]*template.Template
	log   *slog.Logger
	guard *guard // failed sign-ins per account and address pair, per address; checks per account
}

// Register adds the instructor routes to g.
func Register(g *echo.Group, d Deps) {
	h := &handler{Deps: d, log: slog.Default(), guard: newGuard()}
	if h.ClientKey == nil {
		h.ClientKey = func(c echo.Context) string { return c.RealIP() }
	}
	var signInLimit []echo.MiddlewareFunc
	if d.SignInLimit != nil {
		signInLimit = append(signInLimit, d.SignInLimit)
	}
	h.pages = parsePages()
	route := func(method, path string, fn func(echo.Context) error, mws ...echo.MiddlewareFunc) {
		g.Add(method, path, fn, append([]echo.MiddlewareFunc{withBase(path)}, mws...)...)
	}
	route(http.MethodGet, "/static/"+cssName, h.handleCSS)
	route(http.MethodGet, "/static/"+jsName, h.handleJS)
	route(http.MethodGet, "/login", h.handleLoginPage)
	route(http.MethodPost, "/login", h.handleLogin, signInLimit...)
	route(http.MethodPost, "/logout", h.handleLogout)

	auth, owns := h.requireInstructor, h.requireClass
	route(http.MethodGet, "", h.handleClasses, auth)
	route(http.MethodGet, "/", h.handleClasses, auth)
	route(http.MethodPost, "/classes", h.handleCreateClass, auth)
	route(http.MethodGet, "/classes/:class", h.handleMatrix, auth, owns)
	route(http.MethodPost, "/classes/:class/due", h.handleSetDue, auth, owns)
	route(http.MethodGet, "/classes/:class/exercises/:slug", h.handleExercise, auth, owns)
	route(http.MethodPost, "/classes/:class/exercises/:slug/rejudge", h.handleRejudge, auth, owns)
	route(http.MethodGet, "/classes/:class/learners/:learner", h.handleLearner, auth, owns)
	route(http.MethodGet, "/classes/:class/similarity", h.handleSimilarity, auth, owns)
	route(http.MethodGet, "/classes/:class/similarity/:a/:b", h.handlePair, auth, owns)
	route(http.MethodGet, "/classes/:class/reference/:a", h.handleReference, auth, owns)
	route(http.MethodGet, "/classes/:class/report.:format", h.handleExport, auth, owns)
}

// protectedRoutes lists every route Register adds that needs an instructor, with
// ":class" where a class id goes; the authorization test walks it.
var protectedRoutes = []struct{ Method, Path string }{
	{http.MethodGet, "/"},
	{http.MethodPost, "/classes"},
	{http.MethodGet, "/classes/:class"},
	{http.MethodPost, "/classes/:class/due"},
	{http.MethodGet, "/classes/:class/exercises/:slug"},
	{http.MethodPost, "/classes/:class/exercises/:slug/rejudge"},
	{http.MethodGet, "/classes/:class/learners/:learner"},
	{http.MethodGet, "/classes/:class/similarity"},
	{http.MethodGet, "/classes/:class/similarity/:a/:b"},
	{http.MethodGet, "/classes/:class/reference/:a"},
	{http.MethodGet, "/classes/:class/report.:format"},
}

const (
	baseKey       = "instructor.base"
	instructorKey = "instructor.instructor"
	classKey      = "instructor.class"
)

// withBase records the group's prefix (the matched route minus our own
// path) so pages can link to each other wherever the group is mounted. It
// runs first, before the sign-in check renders anything.
func withBase(path string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(baseKey, strings.TrimSuffix(strings.TrimSuffix(c.Path(), path), "/"))
			return next(c)
		}
	}
}

func base(c echo.Context) string {
	b, _ := c.Get(baseKey).(string)
	return b
}

// requireInstructor answers 401 (with the sign-in form) without a valid
// instructor session, and 403 for a state-changing request from another site.
func (h *handler) requireInstructor(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
				return echo.NewHTTPError(http.StatusForbidden, "refused: cross-site request")
			}
		}
		ck, err := c.Cookie(sessionCookie)
		if err != nil || ck.Value == "" {
			return h.unauthorized(c)
		}
		in, err := h.DB.InstructorBySession(r.Context(), ck.Value)
		if errors.Is(err, records.ErrNotFound) {
			return h.unauthorized(c)
		}
		if err != nil {
			return err
		}
		c.Set(instructorKey, in)
		return next(c)
	}
}

func (h *handler) unauthorized(c echo.Context) error {
	if c.Request().Method != http.MethodGet {
		return echo.NewHTTPError(http.StatusUnauthorized, "sign in as an instructor first")
	}
	next := c.Request().URL.RequestURI()
	return h.render(c, http.StatusUnauthorized, "login", loginPage{page: h.page(c, "Instructor sign-in"), Next: next})
}

// requireClass loads :class and answers 403 unless the signed-in
// instructor owns it.
func (h *handler) requireClass(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := strconv.ParseInt(c.Param("class"), 10, 64)
		if err != nil {
			return echo.NewHTTPError(http.StatusNotFound, "no such class")
		}
		cl, err := h.DB.Class(c.Request().Context(), id)
		if errors.Is(err, records.ErrNotFound) {
			return echo.NewHTTPError(http.StatusNotFound, "no such class")
		}
		if err != nil {
			return err
		}
		if cl.InstructorID != instructor(c).ID {
			return echo.NewHTTPError(http.StatusForbidden, "this class belongs to another instructor")
		}
		c.Set(classKey, cl)
		return next(c)
	}
}

func instructor(c echo.Context) *records.Instructor {
	in, _ := c.Get(instructorKey).(*records.Instructor)
	return in
}

func class(c echo.Context) *records.Class {
	cl, _ := c.Get(classKey).(*records.Class)
	return cl
}

// page is what the layout needs.
type page struct {
	Title      string
	Base       string
	Instructor *records.Instructor
	Class      *records.Class
	CSRF       string
	Flash      string
}

func (h *handler) page(c echo.Context, title string) page {
	t, _ := c.Get(csrfContext).(string)
	return page{Title: title, Base: base(c), Instructor: instructor(c), Class: class(c), CSRF: t, Flash: c.QueryParam("done")}
}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{}
	for k, v := range report.Funcs {
		funcs[k] = v
	}
	// Links are built in Go (see link) and given to templates whole, as
	// href="{{.}}": a query string built in a template and placed after a
	// "?" would be escaped again, "=" and "&" included.
	funcs["datetimeLocal"] = func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(dueLayout)
	}
	// when shows a time as a <time> element: UTC in the page, the
	// browser's time zone once the script has run.
	funcs["when"] = func(t any) template.HTML {
		var tm time.Time
		switch t := t.(type) {
		case time.Time:
			tm = t
		case *time.Time:
			if t != nil {
				tm = *t
			}
		}
		if tm.IsZero() {
			return ""
		}
		tm = tm.UTC()
		return template.HTML(`<time class="local" datetime="` + tm.Format(time.RFC3339) + `">` + tm.Format("2006-01-02 15:04") + ` UTC</time>`)
	}
	// utc is a time in the form <time datetime> and JavaScript read.
	funcs["utc"] = func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	names, err := fs.Glob(templateFS, "templates/page_*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/page_"), ".html")
		pages[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return pages
}

// render writes a page; instructor pages are private and never cached.
func (h *handler) render(c echo.Context, code int, name string, data any) error {
	t := h.pages[name]
	if t == nil {
		return fmt.Errorf("no instructor page %q", name)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	c.Response().Header().Set("Cache-Control", "private, no-store")
	return c.HTMLBlob(code, b.Bytes())
}

// handleCSS serves the pages' own stylesheet.
func (h *handler) handleCSS(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", css)
}

// handleJS serves the pages' script: the theme toggle, due dates in the
// browser's time zone, and the join link's copy button.
func (h *handler) handleJS(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", js)
}

// link is path with a query of the non-empty values among kv (name, value,
// name, value…), encoded once: the whole href a template writes.
func link(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// siteURL is the learner site's address for links handed out.
func (h *handler) siteURL(c echo.Context) string {
	if h.SiteURL != nil {
		if u := h.SiteURL(c); u != "" {
			return strings.TrimSuffix(u, "/")
		}
	}
	scheme := "http"
	if c.IsTLS() {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host
}

// JoinLink is the address learners open to join class cl: the sign-in
// page with the code filled in.
func (h *handler) joinLink(c echo.Context, cl *records.Class) string {
	return h.siteURL(c) + "/signin?" + url.Values{"code": {cl.JoinCode}}.Encode()
}

// seeOther redirects within the group, with an optional message.
func seeOther(c echo.Context, path, done string) error {
	u := base(c) + path
	if done != "" {
		u += "?" + url.Values{"done": {done}}.Encode()
	}
	return c.Redirect(http.StatusSeeOther, u)
}

// loadReport computes the class's report as of now.
func (h *handler) loadReport(ctx context.Context, cl *records.Class) (*report.Report, *report.Input, error) {
	in, err := report.Load(ctx, h.DB, cl.ID, report.CatalogExercises(h.Catalog))
	if err != nil {
		return nil, nil, fmt.Errorf("load report of class %d: %w", cl.ID, err)
	}
	return report.Compute(in, report.Options{}), in, nil
}
