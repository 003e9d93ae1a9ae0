package web

import (
	"context"
	"ctrljudge/judge/exercise"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestBrowserLearnerJourney drives a newcomer's journey click by click in
// Chromium: the first step on the home page (175), 171 solved anonymously, a
// class joined with name and join code (the progress comes along), the
// next exercise link, and an old attempt opened and its code restored
// from History; with the class's name and due date (in the learner's own
// time zone) shown. It checks the pages in both themes and at 390 px, and
// with CTRLJUDGE_SCREENSHOTS=DIR saves screenshots at 1400 and 390 px.
func TestBrowserLearnerJourney(t *testing.T) {
	srv := startE2E(t)
	ctx := context.Background()
	in, err := srv.db.AddInstructor(ctx, "Grace", "a long enough password")
	if err != nil {
		t.Fatal(err)
	}
	class, err := srv.db.CreateClass(ctx, in.ID, "Controllers, spring term")
	if err != nil {
		t.Fatal(err)
	}
	due := time.Date(2030, 6, 1, 17, 0, 0, 0, time.UTC) // 13:00 in New York (EDT)
	if err := srv.db.SetDueDate(ctx, class.ID, "reconcile-loop", due); err != nil {
		t.Fatal(err)
	}
	ex, _ := srv.cat.Find("171")
	solution := string(exercise.LearnerSource(ex.Solution))

	b := newE2EBrowser(t, 1400, 1000)
	defer b.checkConsole()
	if _, err := chromedp.Call(b.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"}); err != nil {
		t.Fatalf("time zone: %v", err)
	}
	text := func(sel string) string {
		t.Helper()
		return b.eval("text of "+sel, fmt.Sprintf(`(document.querySelector(%s) || {textContent: ""}).textContent.replace(/\s+/g, " ").trim()`, jsString(sel))).(string)
	}
	count := func(sel string) int {
		t.Helper()
		return int(b.eval("count "+sel, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel))).(float64))
	}
	// both checks a page in the dark theme as well (pressing the toggle)
	// and at 390 px: nothing wider than the screen, and check still holds.
	both := func(name string, check func()) {
		t.Helper()
		check()
		b.shot(name)
		b.do("theme toggle", chromedp.Click("#theme-toggle"))
		if th := b.eval("theme", `document.documentElement.dataset.theme`); th != "dark" {
			t.Errorf("%s: the toggle gave theme %v", name, th)
		}
		check()
		b.do("theme toggle back", chromedp.Click("#theme-toggle"))
		b.do("narrow", chromedp.EmulateViewport(390, 844))
		if w := b.eval("page width", `document.documentElement.scrollWidth`).(float64); w > 391 {
			t.Errorf("%s at 390 px: the page is %v px wide", name, w)
		}
		check()
		b.shot(name + "-390")
		b.do("wide", chromedp.EmulateViewport(1400, 1000))
	}

	// Home: a newcomer sees where to start, and the exercises in order.
	b.do("home", chromedp.Navigate(srv.base+"/"), chromedp.WaitVisible("table.exlist"))
	both("learner-home-new", func() {
		if got := text(".first-step h2"); !strings.Contains(got, "New here") {
			t.Errorf("home: first step %q", got)
		}
		if got, want := text(".counter"), fmt.Sprintf("0 / %d solved", len(srv.cat.Exercises)); got != want {
			t.Errorf("home counter %q", got)
		}
	})
	// Each chapter lists its exercises in the chapter's order (175 comes
	// before 171), which is not the order of their numbers.
	order := b.eval("order", `Array.from(document.querySelectorAll("table.exlist")).map(t => Array.from(t.querySelectorAll("td.num")).map(td => +td.textContent))`).([]any)
	var want []string
	for _, ch := range srv.cat.Chapters {
		var nums []string
		for _, e := range ch.Exercises {
			nums = append(nums, e.ID())
		}
		want = append(want, strings.Join(nums, " "))
	}
	var got []string
	for _, tbl := range order {
		var nums []string
		for _, n := range tbl.([]any) {
			nums = append(nums, fmt.Sprint(n))
		}
		got = append(got, strings.Join(nums, " "))
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("the chapters list %v, want %v", got, want)
	}
	if got := text("table.exlist .due"); got != "" {
		t.Errorf("an anonymous learner sees a due date %q", got)
	}

	// The chapter has a table of contents whose links lead somewhere.
	b.do("chapter", chromedp.Click(".first-step a[href^='/chapters/']"), chromedp.WaitVisible("nav.toc"))
	if n := count("nav.toc a"); n < 3 {
		t.Errorf("chapter contents list %d links", n)
	}
	if broken := b.eval("toc targets", `Array.from(document.querySelectorAll("nav.toc a")).filter(a => !document.getElementById(a.getAttribute("href").slice(1))).map(a => a.textContent)`).([]any); len(broken) > 0 {
		t.Errorf("contents links to nothing: %v", broken)
	}
	both("learner-chapter", func() {})

	// Start: the first step leads to the course's first exercise, 175;
	// the journey goes on with 171, whose reference solution passes.
	b.do("home", chromedp.Navigate(srv.base+"/"), chromedp.WaitVisible(".first-step"))
	b.do("start", chromedp.Click(".first-step a.start"), chromedp.WaitVisible("#btn-submit"))
	if got := text("h1"); got != "175. Own what you create" {
		t.Fatalf("the first step opened %q", got)
	}
	b.do("171", chromedp.Navigate(srv.base+"/exercises/171"), chromedp.WaitVisible("#btn-submit"))
	if err := b.poll(`!!window.cjEditor && !!window.cjEditor.view`, 20*time.Second); err != nil {
		t.Fatalf("the editor did not start: %v", err)
	}
	if got := text("h1"); got != "171. The reconcile loop" {
		t.Fatalf("171 opened %q", got)
	}
	b.judgeIn("submit", solution)
	if got := text("#results .verdict .title"); got != "Accepted" {
		t.Fatalf("reference solution: %q: %s", got, text("#results"))
	}
	next := b.eval("next", `(document.querySelector("#results a.next") || {}).getAttribute ? document.querySelector("#results a.next").getAttribute("href") : ""`)
	if next == "" {
		t.Fatalf("no next exercise link after Accepted: %s", text("#results .verdict"))
	}
	if count("#results .failed-summary") != 0 {
		t.Error("a failed-tests summary on an accepted result")
	}
	// A failing attempt after it: the summary, one open card, copy and
	// run-only buttons.
	b.judgeIn("run", string(ex.Starter))
	if got := text("#results .failed-summary strong"); !strings.Contains(got, "failed") {
		t.Errorf("no summary of failed tests: %q", got)
	}
	if open, all := count("#results .card.fail details[open]"), count("#results .card.fail"); all == 0 || open != 1 {
		t.Errorf("%d of %d failing cards open, want the first only", open, all)
	}
	if count("#results .card.fail button.copy") == 0 || count("#results .card.fail button.run-only") == 0 {
		t.Error("failing cards lack copy or run-only buttons")
	}
	first := text("#results .card.fail .name")
	b.do("run only this test", chromedp.Click("#results .card.fail button.run-only"))
	b.waitDone()
	if got := text("#results .verdict .mode"); !strings.Contains(got, "only “"+first+"”") {
		t.Errorf("run only %q: the result says %q", first, got)
	}
	if n := count("#results .card"); n != 1 {
		t.Errorf("run only one test shows %d cards", n)
	}
	b.shot("learner-run-only")
	if count("#results svg.timeline") == 0 {
		t.Error("the failing card has no timeline")
	}
	b.eval("scroll to the timeline", `(() => { const c = document.querySelector("#results svg.timeline");
		const con = document.querySelector("#console"); con.scrollTop = c.getBoundingClientRect().top - con.getBoundingClientRect().top + con.scrollTop - 60; })()`)
	b.shot("learner-timeline")

	// Join the class: the progress comes along.
	b.do("join", chromedp.Click(".who a[href^='/signin']"), chromedp.WaitVisible("form.signin"))
	both("learner-signin", func() {})
	b.do("sign in", chromedp.SendKeys("form.signin input[name=name]", "Ada Learner"),
		chromedp.SendKeys("form.signin input[name=code]", strings.ToLower(class.JoinCode)),
		chromedp.Click("form.signin button[type=submit]"), chromedp.WaitVisible("#btn-submit"))
	if got := text(".who .signed"); got != "Signed in as Ada Learner · Controllers, spring term" {
		t.Errorf("header after joining: %q", got)
	}
	if got := b.eval("lock", `document.querySelector("#tab-solution").dataset.locked`); got != "false" {
		t.Error("the solution is locked again after joining: the solve was lost")
	}
	if got := text(".meta .due time"); !strings.Contains(got, "1:00") && !strings.Contains(got, "13:00") {
		t.Errorf("due date on the exercise page %q, want 13:00 New York time", got)
	}
	b.do("home", chromedp.Navigate(srv.base+"/"), chromedp.WaitVisible("table.exlist"))
	both("learner-home-joined", func() {
		if got, want := text(".counter"), fmt.Sprintf("1 / %d solved", len(srv.cat.Exercises)); got != want {
			t.Errorf("after joining the class: %q", got)
		}
		if got := text(".who .class-name"); !strings.Contains(got, "Controllers, spring term") {
			t.Errorf("class name in the header: %q", got)
		}
		if got := text("table.exlist .due time"); !strings.Contains(got, "2030") || strings.Contains(got, "UTC") {
			t.Errorf("due date on the list %q, want the learner's local time", got)
		}
	})

	// The next exercise link leads on.
	b.do("171 again", chromedp.Navigate(srv.base+"/exercises/171"), chromedp.WaitVisible("#btn-submit"))
	if err := b.poll(`!!window.cjEditor && !!window.cjEditor.view`, 20*time.Second); err != nil {
		t.Fatalf("the editor did not start: %v", err)
	}
	if n := count("#panel-history tbody tr"); n != 3 {
		t.Errorf("history after joining has %d attempts, want 3", n)
	}
	// History: view the accepted attempt, then restore its code.
	b.do("history tab", chromedp.Click("#tab-history"))
	both("learner-history", func() {
		if n := count("#panel-history button.attempt-view"); n != 3 {
			t.Errorf("%d View buttons", n)
		}
	})
	b.do("view the oldest", chromedp.Click("#panel-history tbody tr:last-child button.attempt-view"))
	if err := b.poll(`document.querySelector("#status").textContent.startsWith("Your attempt")`, 10*time.Second); err != nil {
		t.Fatalf("viewing an attempt: %q", text("#status"))
	}
	if got := text("#results .verdict .title"); got != "Accepted" {
		t.Errorf("the old attempt shows %q", got)
	}
	b.do("restore the oldest", chromedp.Click("#panel-history tbody tr:last-child button.attempt-restore"))
	if err := b.poll(`window.cjEditor.getCode() === `+jsString(solution), 10*time.Second); err != nil {
		t.Errorf("restore: the editor holds %.80q", b.eval("code", "window.cjEditor.getCode()"))
	}
	if got := text("#status"); !strings.HasPrefix(got, "Restored the code") {
		t.Errorf("status after restore %q", got)
	}
	b.shot("learner-history-restored")
	b.do("next exercise", chromedp.Click("#results a.next"), chromedp.WaitVisible("#btn-submit"))
	if got := text("h1"); !strings.HasPrefix(got, strings.TrimPrefix(next.(string), "/exercises/")+".") {
		t.Errorf("the next link %v opened %q", next, got)
	}

	// The workspace at 390 px: the tabs fit, the editor is reachable
	// without scrolling past the whole statement, and no keyboard hint on
	// a touch screen.
	b.do("narrow", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.do("171 narrow", chromedp.Navigate(srv.base+"/exercises/171"), chromedp.WaitVisible("#btn-submit"))
	if w := b.eval("tabs", `document.querySelector(".tabs").getBoundingClientRect().right`).(float64); w > 390 {
		t.Errorf("the tabs reach %v px at 390 px", w)
	}
	if top := b.eval("editor top", `document.querySelector("#editor").getBoundingClientRect().top + scrollY`).(float64); top > 2*844 {
		t.Errorf("the editor starts %v px down at 390 px", top)
	}
	touch := b.eval("touch", `matchMedia("(hover: none), (pointer: coarse)").matches`)
	if vis := b.eval("hint", `getComputedStyle(document.querySelector(".hint")).display`); (vis == "none") != (touch == true) {
		t.Errorf("keyboard hint display %v on a screen with touch=%v", vis, touch)
	} else if touch != true {
		t.Log("this Chromium does not emulate a touch screen's media features; the hint rule is unchecked")
	}
	b.shot("learner-exercise-390")
	b.do("to the editor", chromedp.Click("a.to-editor"))
	b.shot("learner-exercise-390-editor")
	// The results of a run flow in the page, whole: the console does not
	// clip them into a box of its own.
	b.judgeIn("run", string(ex.Starter))
	if clipped := b.eval("console clip", `(c => c.scrollHeight - c.clientHeight)(document.querySelector("#console"))`).(float64); clipped > 1 {
		t.Errorf("at 390 px the console hides %v px of its results in a box of its own", clipped)
	}
	if h := b.eval("card height", `document.querySelector("#results .card.fail").getBoundingClientRect().height`).(float64); h < 100 {
		t.Errorf("at 390 px the first failing card is %v px tall", h)
	}
	b.eval("to results", `scrollTo(0, document.querySelector("#results .card.fail").getBoundingClientRect().top + scrollY - 60)`)
	b.shot("learner-exercise-390-results")
}
