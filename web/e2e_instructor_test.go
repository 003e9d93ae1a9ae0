package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"ctrljudge/judge"
	"ctrljudge/judge/records"
)

// TestBrowserInstructor drives an instructor's journey in headless Chromium,
// on the real server, store and engine: an account added through the
// records, sign-in, a new class, its join link (which a learner opens and
// joins with), a due date entered in the browser's own time zone, learners'
// real submissions (the reference solution, the starter, a commented copy
// of the solution), the matrix with every link on it followed, a learner's
// page (view, compare, changes), analytics, similar code (pairs and the
// reference solution) and the three exports. Each page is checked in both
// themes and at 390 px, where nothing may overflow the page. With
// CTRLJUDGE_SCREENSHOTS=DIR it saves screenshots at 1400 and 390 px.
func TestBrowserInstructor(t *testing.T) {
	needBrowser(t)
	shots := os.Getenv("CTRLJUDGE_SCREENSHOTS")
	const zone = "America/New_York" // the browser's time zone; the server's is UTC
	nyc, err := time.LoadLocation(zone)
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}

	data := t.TempDir()
	db := openStore(t, data)
	cat := builtinCatalog(t)
	ex, _ := cat.Find("171")
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(data, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := New(Config{DB: db, Catalog: cat, Engine: eng, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background(), 5*time.Second)
	base := "http://" + l.Addr().String()

	// The instructor's account, as `judge instructor add` makes it.
	const password = "correct horse battery staple"
	grace, err := db.AddInstructor(context.Background(), "grace", password)
	if err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
		chromedp.Env("TZ="+zone),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*e2eJudgeTimeout)
	defer cancel()

	var mu sync.Mutex
	var console []string
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1000), chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m.String())
			mu.Unlock()
		}
	}()

	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(what, js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	str := func(what, js string) string {
		t.Helper()
		s, _ := eval(what, js).(string)
		return s
	}
	text := func(sel string) string {
		t.Helper()
		return str("text of "+sel, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel))
	}
	jsString := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	// open navigates and checks the answer's status.
	openStatus := func(what, u string, want int64) {
		t.Helper()
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
		if err != nil {
			t.Fatalf("%s: open %s: %v", what, u, err)
		}
		if resp.Status != want {
			t.Fatalf("%s: %s answered %d; want %d", what, u, resp.Status, want)
		}
	}
	open := func(what, u string) {
		t.Helper()
		openStatus(what, u, http.StatusOK)
	}
	// click follows a link or presses a button, then waits for the next
	// page (a new document, fully loaded).
	click := func(what, sel string) {
		t.Helper()
		origin := func() (float64, bool) {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[performance.timeOrigin, document.readyState]`))
			if err != nil || len(v) != 2 {
				return 0, false
			}
			o, _ := v[0].(float64)
			return o, v[1] == "complete"
		}
		before, _ := origin()
		do(what, chromedp.Click(sel))
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if o, done := origin(); o != before && o != 0 && done {
				return
			}
			if time.Now().After(end) {
				t.Fatalf("%s: no new page after clicking %s (now %s)", what, sel, str("location", "location.href"))
			}
		}
	}
	// fits: nothing overflows the page sideways (wide tables scroll in their box).
	fits := func(page string) {
		t.Helper()
		w := eval("width", `[document.documentElement.scrollWidth, window.innerWidth]`).([]any)
		if w[0].(float64) > w[1].(float64)+1 {
			wide := eval("widest", `Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest(".scroll, pre")).slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`)
			t.Errorf("%s: the page is %v px wide in a %v px window: %v", page, w[0], w[1], wide)
		}
	}
	theme := func(name string) {
		eval("theme", fmt.Sprintf(`document.documentElement.dataset.theme = %q`, name))
	}
	// shot saves the page in both themes; the light theme is left on.
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		width := int(eval("width", "window.innerWidth").(float64))
		for _, th := range []string{"light", "dark"} {
			theme(th)
			// A whole page unless it is very long; then what the window shows.
			capture := chromedp.FullScreenshot(100)
			if eval("height", "document.documentElement.scrollHeight").(float64) > 2600 {
				capture = chromedp.CaptureScreenshot()
			}
			b, err := chromedp.Run(ctx, capture)
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("instructor-%s-%d-%s.png", name, width, th)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		theme("light")
	}
	// bothThemes checks that text and background differ enough in each theme.
	bothThemes := func(page string) {
		t.Helper()
		for _, th := range []string{"dark", "light"} {
			theme(th)
			c := eval("colours", `[getComputedStyle(document.body).color, getComputedStyle(document.body).backgroundColor, getComputedStyle(document.querySelector("h1")).color]`).([]any)
			if c[0] == c[1] || c[2] == c[1] {
				t.Errorf("%s in the %s theme: text %v on %v", page, th, c[0], c[1])
			}
		}
	}

	// Sign in: the class list asks for it.
	openStatus("instructor", base+"/instructor/", http.StatusUnauthorized)
	if h := text("h1"); h != "Instructor sign-in" {
		t.Fatalf("signed out, the instructor pages show %q", h)
	}
	do("name", chromedp.SendKeys(`input[name=name]`, "grace"))
	do("password", chromedp.SendKeys(`input[name=password]`, password))
	click("sign in", `form button[type=submit].primary`)
	if h := text("h1"); h != "Your classes" {
		t.Fatalf("after sign-in: %q", h)
	}
	if got := text(".who strong"); got != "grace" {
		t.Errorf("signed in as %q", got)
	}

	// The theme toggle switches and is remembered.
	before := str("theme", "document.documentElement.dataset.theme")
	do("toggle theme", chromedp.Click("#theme-toggle"))
	after := str("theme", "document.documentElement.dataset.theme")
	if after == before || str("pressed", `document.querySelector("#theme-toggle").getAttribute("aria-pressed")`) != fmt.Sprint(after == "dark") {
		t.Errorf("theme toggle: %s -> %s", before, after)
	}
	do("reload", chromedp.Reload())
	if got := str("theme", "document.documentElement.dataset.theme"); got != after {
		t.Errorf("theme after reload %q; want %q", got, after)
	}
	do("toggle back", chromedp.Click("#theme-toggle"))
	if got := str("theme", "document.documentElement.dataset.theme"); got != before {
		t.Errorf("theme toggled back to %q", got)
	}
	if href := str("site link", `(document.querySelector(".top nav a.site") || {}).getAttribute ? document.querySelector(".top nav a.site").getAttribute("href") : ""`); href != "/" {
		t.Errorf("link back to the learner site: %q", href)
	}
	shot("classes-empty")

	// A class.
	do("class name", chromedp.SendKeys(`input[name=name]`, "Ops 101"))
	click("create class", `form[action$="/classes"] button[type=submit]`)
	if h := text("h1"); h != "Ops 101" {
		t.Fatalf("after creating the class: %q", h)
	}
	classes, err := db.InstructorClasses(context.Background(), grace.ID)
	if err != nil || len(classes) != 1 {
		t.Fatalf("classes %v, %v", classes, err)
	}
	class := classes[0]
	matrix := fmt.Sprintf("%s/instructor/classes/%d", base, class.ID)
	if f := text(".flash"); !strings.Contains(f, class.JoinCode) || !strings.Contains(f, "/signin?code=") {
		t.Errorf("flash after creating: %q", f)
	}
	// The empty class: one row across every column.
	if span := eval("colspan", `[document.querySelector(".matrix tbody td").colSpan, document.querySelectorAll(".matrix thead th").length]`).([]any); span[0] != span[1] {
		t.Errorf("the empty-class row spans %v of %v columns", span[0], span[1])
	}
	joinLink := str("join link", `document.querySelector("#join-link").value`)
	if want := base + "/signin?code=" + class.JoinCode; joinLink != want {
		t.Errorf("join link %q; want %q", joinLink, want)
	}
	if hidden := eval("copy", `document.querySelector("button[data-copy=join-link]").hidden`); hidden != false {
		t.Error("the join link's copy button is hidden")
	}
	bothThemes("empty matrix")
	shot("matrix-empty")

	// A due date entered in the browser's time zone (New York): yesterday
	// at 09:00 there, so every solve is late.
	dueLocal := time.Date(time.Now().In(nyc).Year(), time.Now().In(nyc).Month(), time.Now().In(nyc).Day()-1, 9, 0, 0, 0, nyc)
	if tz := text(".tz-name"); tz != zone {
		t.Errorf("the due-date note names the zone %q; want %q", tz, zone)
	}
	form := fmt.Sprintf(`form.due-form:has(input[name=exercise][value=%q])`, ex.Slug)
	eval("set due", fmt.Sprintf(`document.querySelector(%q).value = %q`, form+` input[type=datetime-local]`, dueLocal.Format("2006-01-02T15:04")))
	click("save due date", form+` button[type=submit]`)
	due, err := db.DueDates(context.Background(), class.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := due[ex.Slug]; !got.Equal(dueLocal) {
		t.Errorf("due date stored as %v; want %v (09:00 in New York)", got.UTC(), dueLocal.UTC())
	}
	if f := text(".flash"); !strings.Contains(f, dueLocal.UTC().Format("15:04")+" UTC") || !strings.Contains(f, zone) {
		t.Errorf("due-date confirmation %q", f)
	}
	if v := str("due input", fmt.Sprintf(`document.querySelector(%q).value`, form+` input[type=datetime-local]`)); v != dueLocal.Format("2006-01-02T15:04") {
		t.Errorf("the due-date input shows %q; want the local time %s", v, dueLocal.Format("2006-01-02T15:04"))
	}
	if h := text(".matrix th.ex .sub"); !strings.Contains(h, "due "+dueLocal.Format("2006-01-02 15:04")) {
		t.Errorf("the matrix heading shows the due date as %q; want it in local time", h)
	}

	// A learner opens the join link: the code is filled in.
	open("join link", joinLink)
	if got := str("code", `document.querySelector("input[name=code]").value`); got != class.JoinCode {
		t.Errorf("the join link fills in the code %q; want %q", got, class.JoinCode)
	}
	do("learner name", chromedp.SendKeys(`input[name=name]`, "Ana"))
	click("join", `form.signin button[type=submit]`)
	if who := text(".who strong"); who != "Ana" {
		t.Errorf("after joining, signed in as %q", who)
	}

	// Learners submit, judged by the real engine: Ana (in this browser)
	// the reference solution, Ben the starter, Cleo the starter and then a
	// commented copy of the solution; Dev joins and sends nothing.
	var ids []int64
	sent, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/api/exercises/171/submissions", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({mode: "submit", code: `+jsString(string(ex.Solution))+`})}).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("Ana submits: %v", err)
	}
	var sr submitResponse
	if err := json.Unmarshal([]byte(sent), &sr); err != nil || sr.ID == 0 {
		t.Fatalf("Ana's submission: %q", sent)
	}
	ids = append(ids, sr.ID)
	learner := func(name string) *client {
		jar, _ := cookiejar.New(nil)
		c := &client{t: t, base: base, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
		r := c.do(http.MethodPost, "/signin", url.Values{"name": {name}, "code": {class.JoinCode}}.Encode(),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s joins: %d %s", name, r.StatusCode, r.body)
		}
		return c
	}
	cleoCopy := strings.Replace(string(ex.Solution), "\n", "\n// I checked this twice.\n", 1)
	ids = append(ids, learner("Ben").submit("171", "submit", string(ex.Starter)).ID)
	cleo := learner("Cleo")
	ids = append(ids, cleo.submit("171", "submit", string(ex.Starter)).ID)
	ids = append(ids, cleo.submit("171", "submit", cleoCopy).ID)
	learner("Dev")
	deadline := time.Now().Add(2 * e2eJudgeTimeout)
	for _, id := range ids {
		for {
			s, err := db.Submission(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if s.State == records.StateDone || s.State == records.StateNotJudged {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("submission %d not judged in time: %s", id, s.State)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	outcome := map[int64]string{}
	for _, id := range ids {
		s, _ := db.Submission(context.Background(), id)
		outcome[id] = string(s.Outcome)
	}
	if outcome[ids[0]] != "accepted" || outcome[ids[3]] != "accepted" || outcome[ids[1]] == "accepted" || outcome[ids[2]] == "accepted" {
		t.Fatalf("outcomes %v: want the solution and its copy accepted, the starter not", outcome)
	}

	// The matrix.
	open("matrix", matrix)
	rows := eval("rows", `Array.from(document.querySelectorAll(".matrix tbody tr")).map(tr => ({
		name: tr.querySelector("td").textContent.trim(),
		cell: tr.querySelector("td.cell").className.replace("cell ", ""),
		text: tr.querySelector("td.cell").textContent.replace(/\s+/g, " ").trim()}))`).([]any)
	want := map[string]string{"Ana": "solved_late", "Ben": "attempted", "Cleo": "solved_late", "Dev": "not_started"}
	if len(rows) != 4 {
		t.Fatalf("matrix rows %v", rows)
	}
	for _, r := range rows {
		r := r.(map[string]any)
		name, _ := r["name"].(string)
		if want[name] != r["cell"] {
			t.Errorf("matrix: %s's 171 cell is %v (%v); want %s", name, r["cell"], r["text"], want[name])
		}
		if want[name] == "solved_late" && !strings.Contains(r["text"].(string), "late") {
			t.Errorf("matrix: %s's late solve has no late badge: %v", name, r["text"])
		}
	}
	// Exercise headings: the label above its links, never run together.
	overlap := eval("heading layout", `Array.from(document.querySelectorAll(".matrix th.ex")).filter(th => {
		const a = th.querySelector("a.sort").getBoundingClientRect(), s = th.querySelector(".sub").getBoundingClientRect();
		return s.top < a.bottom - 1; }).length`)
	if overlap != 0.0 {
		t.Errorf("%v exercise headings run their label into their links", overlap)
	}
	bothThemes("matrix")
	shot("matrix")

	// Every link on the matrix page, followed: each answers 200 at the
	// address it names (a query encoded once) and shows what it says.
	links := eval("links", `Array.from(new Set(Array.from(document.querySelectorAll("a[href]")).map(a => a.href)))`).([]any)
	exports := 0
	for _, v := range links {
		u := v.(string)
		if strings.Contains(strings.ToLower(u), "%3d") || strings.Contains(strings.ToLower(u), "%26") {
			t.Errorf("link %s: its query is escaped twice", u)
		}
		if strings.Contains(u, "/report.") {
			exports++
			continue // downloads, checked below
		}
		open("link", u)
		if loc := str("location", "location.href"); loc != u {
			t.Errorf("link %s landed on %s", u, loc)
		}
		pu, _ := url.Parse(u)
		q := pu.Query()
		h1 := text("h1")
		switch {
		case strings.Contains(pu.Path, "/learners/"):
			if !slices.Contains([]string{"Ana", "Ben", "Cleo", "Dev"}, h1) {
				t.Errorf("%s: learner page titled %q", u, h1)
			}
			if e := q.Get("exercise"); e != "" {
				if cur := text(".filters a.current"); cur != e {
					t.Errorf("%s: the filter shows %q", u, cur)
				}
				if n := eval("other rows", fmt.Sprintf(`Array.from(document.querySelectorAll("form.history tbody tr")).filter(tr => tr.children.length > 4 && tr.children[3].textContent !== %q).length`, e)); n != 0.0 {
					t.Errorf("%s: %v rows of other exercises", u, n)
				}
			}
			if id := q.Get("show"); id != "" {
				if h := str("h2s", `Array.from(document.querySelectorAll("main h2")).map(h => h.textContent).join("|")`); !strings.Contains(h, "Submission "+id+":") {
					t.Errorf("%s: no submission %s shown (%q)", u, id, h)
				}
				if n := eval("code lines", `document.querySelectorAll("pre.code div").length`); n.(float64) < 5 {
					t.Errorf("%s: %v code lines shown", u, n)
				}
			}
		case strings.Contains(pu.Path, "/exercises/"):
			if !strings.Contains(h1, pu.Path[strings.LastIndex(pu.Path, "/")+1:]) {
				t.Errorf("%s: analytics titled %q", u, h1)
			}
		case strings.HasSuffix(pu.Path, "/similarity"):
			if h1 != "Similar code" {
				t.Errorf("%s: %q", u, h1)
			}
		case q.Get("sort") != "":
			if n := eval("sorted rows", `document.querySelectorAll(".matrix tbody tr").length`); n != 4.0 {
				t.Errorf("%s: %v rows", u, n)
			}
			if marks := text(".matrix thead"); !strings.ContainsAny(marks, "▲▼") {
				t.Errorf("%s: no sort mark in %q", u, marks)
			}
		case pu.Path == "/":
			if n := eval("exercises", `document.querySelectorAll("a[href^='/exercises/']").length`); n.(float64) < 1 {
				t.Errorf("%s: the learner site lists no exercise", u)
			}
		case strings.HasPrefix(pu.Path, "/instructor"):
			if h1 != "Ops 101" && h1 != "Your classes" {
				t.Errorf("%s: %q", u, h1)
			}
		default:
			t.Errorf("unexpected link %s on the matrix", u)
		}
	}
	if exports != 3 {
		t.Errorf("%d export links on the matrix; want CSV, JSON and HTML", exports)
	}

	// A learner's page, click by click: open Cleo, view her latest submit,
	// compare her two, and follow "changes".
	open("matrix", matrix)
	click("Cleo", `.matrix tbody tr:nth-child(3) td:first-child a`)
	if h := text("h1"); h != "Cleo" {
		t.Fatalf("clicked Cleo, got %q", h)
	}
	if n := eval("rows", `document.querySelectorAll("form.history tbody tr").length`); n != 2.0 {
		t.Errorf("Cleo's history lists %v submissions", n)
	}
	click("view", `form.history tbody tr:first-child td.actions a:first-child`)
	if !strings.Contains(str("h2s", `Array.from(document.querySelectorAll("main h2")).map(h => h.textContent).join("|")`), fmt.Sprintf("Submission %d:", ids[3])) {
		t.Errorf("view shows %q", str("h2s", `Array.from(document.querySelectorAll("main h2")).map(h => h.textContent).join("|")`))
	}
	if v := text("main p.outcome"); !strings.Contains(v, "Accepted") {
		t.Errorf("the viewed submit's verdict: %q", v)
	}
	if n := eval("tests", `document.querySelectorAll("main table.grid:not(.history) tbody tr, main h2 ~ table.grid tbody tr").length`); n.(float64) < 1 {
		t.Errorf("the viewed submit lists no tests")
	}
	shot("learner-view")
	do("old", chromedp.Click(`form.history tbody tr:nth-child(2) input[name=a]`))
	do("new", chromedp.Click(`form.history tbody tr:nth-child(1) input[name=b]`))
	click("compare", `form.history button[type=submit]`)
	if h := str("h2s", `Array.from(document.querySelectorAll("main h2")).map(h => h.textContent).join("|")`); !strings.Contains(h, fmt.Sprintf("Changes from %d to %d", ids[2], ids[3])) {
		t.Errorf("compare shows %q", h)
	}
	if n := eval("added", `document.querySelectorAll("pre.diff .dadd").length`); n.(float64) < 5 {
		t.Errorf("the diff adds %v lines", n)
	}
	if !strings.Contains(text("pre.diff"), "I checked this twice.") {
		t.Error("the diff lacks Cleo's comment")
	}
	bothThemes("learner compare")
	shot("learner-compare")
	open("Cleo", str("Cleo", "location.origin + location.pathname"))
	click("changes", `form.history tbody tr:first-child td.actions a:nth-child(2)`)
	if n := eval("added", `document.querySelectorAll("pre.diff .dadd").length`); n.(float64) < 5 {
		t.Errorf("the changes link shows a diff of %v added lines", n)
	}

	// Analytics, from the matrix heading.
	open("matrix", matrix)
	click("analytics", `.matrix th.ex .sub a`)
	stats := text(".stats")
	for _, w := range []string{"3 of 4learners attempted it", "2 of 4solved it", "67%of the 3 who attempted solved it", "4submits"} {
		if !strings.Contains(strings.Join(strings.Fields(stats), ""), strings.ReplaceAll(w, " ", "")) {
			t.Errorf("analytics stats %q lack %q", stats, w)
		}
	}
	shares := eval("outcome shares", `Array.from(document.querySelectorAll(".charts section")).filter(s => s.querySelector("h3").textContent.startsWith("Outcomes")).map(s => Array.from(s.querySelectorAll("svg .val")).map(v => v.textContent).join(" "))`).([]any)
	if len(shares) != 1 {
		t.Fatalf("outcome chart %v", shares)
	}
	sum := 0
	for _, m := range regexp.MustCompile(`(\d+)% \(`).FindAllStringSubmatch(shares[0].(string), -1) {
		var n int
		fmt.Sscan(m[1], &n)
		sum += n
	}
	if sum < 99 || sum > 101 {
		t.Errorf("outcome shares add up to %d%%: %q", sum, shares[0])
	}
	bothThemes("analytics")
	shot("analytics")

	// Similar code: Ana's and Cleo's copies of the solution as a pair, and
	// both beside the reference solution (Ana's identical).
	click("similar code", `.top nav a[href$="/similarity"]`)
	pairs := text("main table.grid tbody")
	if !strings.Contains(pairs, "Ana") || !strings.Contains(pairs, "Cleo") {
		t.Errorf("similar pairs: %q", pairs)
	}
	ref := eval("reference", `Array.from(document.querySelectorAll("main table.grid")).pop().textContent.replace(/\s+/g, " ")`).(string)
	if !strings.Contains(ref, "identical") || !strings.Contains(ref, "Ana") || !strings.Contains(ref, "Cleo") || strings.Contains(ref, "Ben") {
		t.Errorf("close to the reference: %q", ref)
	}
	shot("similarity")
	click("beside the reference", `a[href*="/reference/"]`)
	if h := str("h2s", `Array.from(document.querySelectorAll("main h2")).map(h => h.textContent).join("|")`); !strings.Contains(h, "Reference solution") {
		t.Errorf("the reference side by side shows %q", h)
	}
	if n := eval("marked", `document.querySelectorAll("pre.code .mark").length`); n.(float64) < 5 {
		t.Errorf("%v lines marked beside the reference", n)
	}
	shot("reference")
	open("similarity", fmt.Sprintf("%s/instructor/classes/%d/similarity", base, class.ID))
	click("pair", `a[href*="/similarity/"]`)
	if n := eval("marked", `document.querySelectorAll("pre.code .mark").length`); n.(float64) < 5 {
		t.Errorf("%v lines marked in the pair", n)
	}

	// Exports: each a download with the class's learners.
	open("matrix", matrix)
	for _, format := range []string{"csv", "json", "html"} {
		r, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](fmt.Sprintf(`fetch(document.querySelector('a[href$="/report.%s"]').href).then(async r => ({
			status: r.status, type: r.headers.get("Content-Type"), disposition: r.headers.get("Content-Disposition"), body: await r.text()}))`, format), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("export %s: %v", format, err)
		}
		body, _ := r["body"].(string)
		disp, _ := r["disposition"].(string)
		if r["status"] != 200.0 || !strings.HasPrefix(disp, "attachment;") || !strings.Contains(disp, fmt.Sprintf(`class-%d-Ops-101.%s"`, class.ID, format)) {
			t.Errorf("export %s: %v %v %q", format, r["status"], r["type"], disp)
		}
		switch format {
		case "csv":
			recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
			if err != nil || len(recs) != 5 {
				t.Errorf("CSV export: %d rows, %v", len(recs), err)
				break
			}
			col := slices.Index(recs[0], ex.Slug+"_best_score")
			for _, rec := range recs[1:] {
				if col < 0 || strings.Contains(rec[col], ".") && len(strings.Split(rec[col], ".")[1]) > 1 {
					t.Errorf("CSV best score %q (column %d)", rec, col)
				}
			}
		case "json":
			var rep struct {
				Learners   []struct{ Name string } `json:"learners"`
				Similarity struct {
					Reference []struct {
						Name      string `json:"name"`
						Identical bool   `json:"identical"`
					} `json:"reference"`
				} `json:"similarity"`
			}
			if err := json.Unmarshal([]byte(body), &rep); err != nil || len(rep.Learners) != 4 || len(rep.Similarity.Reference) == 0 {
				t.Errorf("JSON export: %v, %+v", err, rep)
			}
		case "html":
			if !strings.Contains(body, "<svg") || !strings.Contains(body, "Cleo") || !strings.Contains(body, "Close to the reference solution") {
				t.Errorf("HTML export lacks the chart, a learner or the reference section")
			}
		}
	}

	// 390 px: every page fits, in both themes.
	pages := []struct{ name, path string }{
		{"classes", "/instructor/"},
		{"matrix", strings.TrimPrefix(matrix, base)},
		{"learner", fmt.Sprintf("/instructor/classes/%d/learners/%d?a=%d&b=%d&show=%d", class.ID, learnerOf(t, db, ids[3]), ids[2], ids[3], ids[3])},
		{"analytics", fmt.Sprintf("/instructor/classes/%d/exercises/%s", class.ID, ex.Slug)},
		{"similarity", fmt.Sprintf("/instructor/classes/%d/similarity", class.ID)},
		{"reference", fmt.Sprintf("/instructor/classes/%d/reference/%d", class.ID, ids[0])},
	}
	for _, width := range []int64{1400, 390} {
		do("viewport", chromedp.EmulateViewport(width, 900))
		for _, p := range pages {
			open(p.name, base+p.path)
			for _, th := range []string{"light", "dark"} {
				theme(th)
				fits(fmt.Sprintf("%s at %d px, %s", p.name, width, th))
			}
			theme("light")
			if width == 390 {
				if top := eval("header", `[document.querySelector(".top").scrollWidth, document.querySelector(".top").clientWidth]`).([]any); top[0].(float64) > top[1].(float64)+1 {
					t.Errorf("%s at 390 px: the header overflows (%v)", p.name, top)
				}
				shot(p.name)
				if p.name == "learner" {
					for _, part := range []string{"pre.diff", "main h2:last-of-type"} {
						eval("scroll", fmt.Sprintf(`document.querySelector(%q).scrollIntoView()`, part))
						shot(p.name + "-" + strings.Fields(strings.NewReplacer(".", " ", ":", " ").Replace(part))[1])
					}
					eval("scroll", "window.scrollTo(0, 0)")
				}
			}
		}
	}
	do("viewport", chromedp.EmulateViewport(1400, 1000))

	mu.Lock()
	defer mu.Unlock()
	for _, m := range console {
		if strings.Contains(m, "status of 401") {
			continue // the sign-in page, opened signed out on purpose
		}
		if strings.HasPrefix(m, "error") || strings.HasPrefix(m, "exception") || strings.Contains(m, "Content Security Policy") {
			t.Errorf("browser console: %s", m)
		}
	}
}

func learnerOf(t *testing.T, db *records.DB, submission int64) int64 {
	t.Helper()
	s, err := db.Submission(context.Background(), submission)
	if err != nil {
		t.Fatal(err)
	}
	return s.LearnerID
}
