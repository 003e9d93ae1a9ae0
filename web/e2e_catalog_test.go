package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserEveryExercise submits, on each exercise's own page in
// Chromium, its reference solution, which must be accepted, and its
// starter, which must fail with a first failing card, open, that says in
// words what went wrong (the check, what happened, a replay command). 171's page
// is driven in depth by TestBrowser; this covers the rest of the catalog,
// so that a new exercise is judged end to end in the browser the day it
// lands. With CTRLJUDGE_SCREENSHOTS=DIR it saves each failing card.
func TestBrowserEveryExercise(t *testing.T) {
	srv := startE2E(t)
	b := newE2EBrowser(t, 1400, 1000)
	defer b.checkConsole()
	for _, ex := range srv.cat.Exercises {
		if ex.ID() == "171" {
			continue
		}
		t.Run(ex.ID(), func(t *testing.T) {
			b.do("exercise "+ex.ID(), chromedp.Navigate(srv.base+"/exercises/"+ex.ID()), chromedp.WaitVisible("#btn-submit"))
			if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`!!window.cjEditor && !!window.cjEditor.view`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("the editor did not start: %v", err)
			}
			b.judgeIn("submit", string(ex.Solution))
			if title := b.eval("verdict", `document.querySelector("#results .verdict .title").textContent`); title != "Accepted" {
				t.Errorf("reference solution: %v: %v", title, b.eval("results", `document.querySelector("#results").textContent.slice(0, 400)`))
			}
			b.judgeIn("submit", string(ex.Starter))
			card := b.eval("first failing card", `(() => {
				const c = document.querySelector("#results .card.fail");
				return c ? {
					open: c.querySelector("details").open,
					oracle: (c.querySelector(".facts dd") || {}).textContent || "",
					message: (c.querySelectorAll(".facts dd")[1] || {}).textContent || "",
					replay: (c.querySelector("code.cmd") || {}).textContent || "",
				} : null;
			})()`)
			c, _ := card.(map[string]any)
			if c == nil {
				t.Fatalf("the starter passed: %v", b.eval("results", `document.querySelector("#results").textContent.slice(0, 400)`))
			}
			if c["open"] != true || c["oracle"] == "" || len(strings.Fields(c["message"].(string))) < 8 || !strings.HasPrefix(c["replay"].(string), "judge test "+ex.ID()) {
				t.Errorf("first failing card of the starter: %v", c)
			}
			b.do("scroll to the card", chromedp.ScrollIntoView("#results .card.fail summary"))
			b.shot("exercise-" + ex.ID() + "-failing")
		})
	}
}
