package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
)

// chromiumPath is where Debian's chromium lives; the Makefile installs it.
const chromiumPath = "/usr/bin/chromium"

// needBrowser skips a test that drives Chromium when there is none, and
// under -short, the fast inner loop.
func needBrowser(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives Chromium; not with -short")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no browser at %s (the Makefile installs Debian's chromium): %v", chromiumPath, err)
	}
}

// e2eJudgeTimeout bounds one judgement in the browser test: the first one
// builds and compiles from a cold cache.
const e2eJudgeTimeout = 5 * time.Minute

// TestBrowser drives the real server, store and engine from headless
// Chromium: the reference solution passes and unlocks the solution tab, the
// starter fails with explained faults, and a draft survives a reload. With
// CTRLJUDGE_SCREENSHOTS=DIR it also saves screenshots of every page in both
// themes.
func TestBrowser(t *testing.T) {
	srv := startE2E(t)
	b := newE2EBrowser(t, 1280, 800)
	defer b.checkConsole()
	base, cat, ctx := srv.base, srv.cat, b.ctx
	ex, _ := cat.Find("171")
	do, eval, shot, judgeIn, jsString := b.do, b.eval, b.shot, b.judgeIn, jsString

	do("home", chromedp.Navigate(base+"/"), chromedp.WaitVisible("table.exlist"))
	shot("home")
	do("chapter", chromedp.Navigate(base+"/chapters/"+ex.Chapter), chromedp.WaitVisible("article.chapter-body"))
	shot("chapter")
	do("exercise", chromedp.Navigate(base+"/exercises/171"), chromedp.WaitVisible("#btn-submit"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!window.cjEditor && !!window.cjEditor.view`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the editor did not start: %v", err)
	}
	if got := eval("starter", "window.cjEditor.getCode()"); got != string(ex.Starter) {
		t.Errorf("editor starts with %.80q, want the starter", got)
	}
	if locked := eval("lock", `document.querySelector("#tab-solution").dataset.locked`); locked != "true" {
		t.Errorf("solution tab locked=%v before any submit", locked)
	}
	shot("exercise-new")

	// A compile error is marked on the learner's line.
	broken := strings.TrimRight(string(ex.Starter), "\n") + "\n\nvar broken int = \"not a number\"\n"
	brokenLine := strings.Count(broken, "\n")
	judgeIn("run", broken)
	if title := eval("verdict", `document.querySelector("#results .verdict .title").textContent`); title != "Compile error" {
		t.Errorf("broken code: %v", title)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`document.querySelector("#editor").shadowRoot.querySelectorAll(".cm-lintRange-error, .cm-lint-marker-error").length > 0`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("no compile error marker in the editor: %v", eval("diagnostics", `document.querySelector("#results").textContent`))
	}
	if line := eval("diagnostic line", `(document.querySelector("#results .diagnostics button.goto") || {}).textContent || ""`); !strings.HasPrefix(line.(string), fmt.Sprintf("line %d:", brokenLine)) {
		t.Errorf("diagnostic points at %q, want line %d", line, brokenLine)
	}
	shot("exercise-compile-error")

	// The reference solution passes every test and unlocks the solution.
	judgeIn("submit", string(ex.Solution))
	title := eval("verdict", `document.querySelector("#results .verdict .title").textContent`)
	pass := eval("passing cards", `document.querySelectorAll("#results .card.pass").length`)
	failN := eval("failing cards", `document.querySelectorAll("#results .card.fail").length`)
	if title != "Accepted" || failN != 0.0 || pass.(float64) < 1 {
		msg := eval("message", `(document.querySelector("#results .message") || {}).textContent || ""`)
		t.Fatalf("reference solution: %v, %v passing and %v failing cards; %v", title, pass, failN, msg)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#tab-solution").dataset.locked === "false"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Error("the solution tab did not unlock after an accepted submit")
	}
	do("open the solution tab", chromedp.Click("#tab-solution"))
	if got := eval("solution", `document.querySelector("#panel-solution").textContent`).(string); !strings.Contains(got, "Reference solution") {
		t.Errorf("solution panel: %.200q", got)
	}
	shot("exercise-accepted")
	do("statement tab", chromedp.Click("#tab-statement"))

	// The starter fails, and the failing cards explain the faults.
	judgeIn("submit", string(ex.Starter))
	failing := eval("failing cards", `Array.from(document.querySelectorAll("#results .card.fail")).map(c => ({
		open: c.querySelector("details").open,
		faults: Array.from(c.querySelectorAll(".faults li")).map(li => li.textContent),
		oracle: (c.querySelector(".facts dd") || {}).textContent || "",
		svg: !!c.querySelector("svg.timeline"),
		replay: (c.querySelector("code.cmd") || {}).textContent || "",
	}))`).([]any)
	if len(failing) == 0 {
		t.Fatalf("the starter passed: %v", eval("results", `document.querySelector("#results").textContent`))
	}
	withFaults := 0
	for i, f := range failing {
		c := f.(map[string]any)
		// Only the first failing card is open; the summary lists them all.
		if c["open"] != (i == 0) || c["oracle"] == "" || !strings.HasPrefix(c["replay"].(string), "judge ") {
			t.Errorf("failing card %d: %v", i, c)
		}
		if len(c["faults"].([]any)) > 0 && c["svg"] == true {
			withFaults++
		}
	}
	if withFaults == 0 {
		t.Errorf("no failing card explains its faults with a timeline: %v", failing)
	}
	shot("exercise-failing")
	eval("scroll", `(() => { const c = document.querySelector("#results .card.fail.faulted") || document.querySelector("#results .card.fail");
		const con = document.querySelector("#console"); con.scrollTop = c.getBoundingClientRect().top - con.getBoundingClientRect().top + con.scrollTop - 8; })()`)
	shot("exercise-failing-card")
	eval("scroll", `(() => { const c = document.querySelector("#results .card.fail.faulted svg.timeline") || document.querySelector("#results svg.timeline");
		const con = document.querySelector("#console"); con.scrollTop = c.getBoundingClientRect().top - con.getBoundingClientRect().top + con.scrollTop - 120; })()`)
	shot("exercise-failing-timeline")

	// A draft typed after that comes back from the server after a reload.
	draft := string(ex.Starter) + "\n// my draft, kept by the server\n"
	eval("type draft", "window.cjEditor.setCode("+jsString(draft)+")")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#save-state").textContent === "Saved"`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("draft not saved: %v", eval("save state", `document.querySelector("#save-state").textContent`))
	}
	do("reload", chromedp.Reload(), chromedp.WaitVisible("#btn-submit"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!window.cjEditor`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatal("the editor did not start after the reload")
	}
	if got := eval("page data", `JSON.parse(document.getElementById("page-data").textContent).draft`); got != draft {
		t.Errorf("server draft after reload %.120q", got)
	}
	if got := eval("editor", "window.cjEditor.getCode()"); got != draft {
		t.Errorf("editor after reload %.120q", got)
	}
	if n := eval("history", `document.querySelectorAll("#panel-history tbody tr").length`); n != 3.0 {
		t.Errorf("history lists %v submissions, want 3", n)
	}
	// Keyboard: Esc leaves the editor for the Run button; Ctrl+Enter runs
	// the sample tests.
	// Ctrl+F opens CodeMirror's search panel; the first Esc closes it, the
	// second leaves the editor.
	eval("focus editor", "window.cjEditor.focus()")
	do("ctrl+f", chromedp.KeyEvent("f", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if open := eval("search panel", `!!document.querySelector("#editor").shadowRoot.querySelector(".cm-search")`); open != true {
		t.Error("Ctrl+F opened no search panel")
	}
	do("escape", chromedp.KeyEvent(kb.Escape))
	if open := eval("search panel", `!!document.querySelector("#editor").shadowRoot.querySelector(".cm-search")`); open != false {
		t.Error("Esc left the search panel open")
	}
	eval("focus editor", "window.cjEditor.focus()")
	do("escape", chromedp.KeyEvent(kb.Escape))
	if id := eval("focus", "document.activeElement.id"); id != "btn-run" {
		t.Errorf("Esc in the editor moved focus to %q, want btn-run", id)
	}
	eval("focus editor", "window.cjEditor.focus()")
	do("ctrl+enter", chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`document.querySelector("#status").textContent.startsWith("Done") && document.querySelectorAll("#panel-history tbody tr").length === 4`,
		chromedp.WithPollingTimeout(e2eJudgeTimeout), chromedp.WithPollingInterval(200*time.Millisecond))); err != nil {
		t.Errorf("Ctrl+Enter did not run: %v", eval("status", `document.querySelector("#status").textContent`))
	} else if mode := eval("mode", `document.querySelector("#results .verdict .muted").textContent`); !strings.HasPrefix(mode.(string), "Run: sample tests") {
		t.Errorf("Ctrl+Enter judged %q", mode)
	}

	// Home filters work as the learner types.
	do("home", chromedp.Navigate(base+"/"), chromedp.WaitVisible("table.exlist"))
	do("search", chromedp.SendKeys("#f-q", "no such thing"))
	if hidden := eval("no match", `document.querySelector("#no-match").hidden`); hidden != false {
		t.Error("a search matching nothing shows no message")
	}
	eval("clear", `(() => { const q = document.querySelector("#f-q"); q.value = ""; q.dispatchEvent(new Event("input", {bubbles: true})); })()`)
	do("search again", chromedp.SendKeys("#f-q", "reconcile"))
	if n := eval("rows", `document.querySelectorAll("table.exlist tbody tr:not([hidden])").length`); n != 1.0 {
		t.Errorf("search for reconcile shows %v rows", n)
	}

	if b.shots != "" {
		do("exercise", chromedp.Navigate(base+"/exercises/171"), chromedp.WaitVisible("#btn-submit"))
		do("narrow", chromedp.EmulateViewport(390, 844))
		shot("exercise-narrow")
		do("home narrow", chromedp.Navigate(base+"/"), chromedp.WaitVisible("table.exlist"))
		shot("home-narrow")
	}

}

// e2eServer is the real server, store and engine on a loopback port.
type e2eServer struct {
	base string
	cat  *exercise.Catalog
	db   *records.DB
	srv  *Server
}

// startE2E starts the server for a browser test, or skips the test when
// there is no browser.
func startE2E(t *testing.T) *e2eServer {
	t.Helper()
	needBrowser(t)
	data := t.TempDir()
	db := openStore(t, data)
	cat := builtinCatalog(t)
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(data, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv, err := New(Config{DB: db, Catalog: cat, Engine: eng, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(context.Background(), 5*time.Second) })
	return &e2eServer{base: "http://" + l.Addr().String(), cat: cat, db: db, srv: srv}
}

// e2eBrowser is headless Chromium with what the page says on its console.
type e2eBrowser struct {
	t     *testing.T
	ctx   context.Context
	shots string // CTRLJUDGE_SCREENSHOTS: where screenshots go, "" for none

	mu      sync.Mutex
	console []string
}

func newE2EBrowser(t *testing.T, width, height int64) *e2eBrowser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(int(width), int(height)),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 3*e2eJudgeTimeout)
	t.Cleanup(cancel)
	b := &e2eBrowser{t: t, ctx: ctx, shots: os.Getenv("CTRLJUDGE_SCREENSHOTS")}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height), chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m.String())
			b.mu.Unlock()
		}
	}()
	return b
}

// checkConsole fails the test on errors, CSP refusals (reported as
// errors) and uncaught exceptions on the page's console.
func (b *e2eBrowser) checkConsole() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		if strings.HasPrefix(m, "error") || strings.HasPrefix(m, "exception") || strings.Contains(m, "Content Security Policy") {
			b.t.Errorf("browser console: %s", m)
		}
	}
}

func (b *e2eBrowser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *e2eBrowser) eval(what, js string) any {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](js))
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// poll waits for a script expression to be true.
func (b *e2eBrowser) poll(js string, timeout time.Duration) error {
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond)))
	return err
}

// shot saves a screenshot in both themes, when screenshots are asked for.
func (b *e2eBrowser) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	for _, theme := range []string{"light", "dark"} {
		b.eval("theme", fmt.Sprintf(`document.documentElement.dataset.theme = %q`, theme))
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			b.t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(b.shots, name+"-"+theme+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.eval("theme", `document.documentElement.dataset.theme = "light"`)
}

// judgeIn puts code in the editor, presses the button and waits for the
// final result.
func (b *e2eBrowser) judgeIn(button, code string) {
	b.t.Helper()
	b.eval("set code", "window.cjEditor.setCode("+jsString(code)+")")
	b.do("press "+button, chromedp.Click("#btn-"+button))
	b.waitDone()
}

// waitDone waits for the judgement in flight to end.
func (b *e2eBrowser) waitDone() {
	b.t.Helper()
	if err := b.poll(`!document.querySelector("#btn-submit").disabled && document.querySelector("#status").textContent.startsWith("Done")`, e2eJudgeTimeout); err != nil {
		status := b.eval("status", `document.querySelector("#status").textContent`)
		b.t.Fatalf("no result: %v (status %q)", err, status)
	}
}

func jsString(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}
