package web

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"ctrljudge/judge"
	"ctrljudge/judge/verdict"
)

// A failing card carries everything a learner needs to understand the
// failure, with the learner's own text escaped.
func TestFailingCardExplainsItself(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	tr := &verdict.TestResult{
		Name: "rolling update", Status: verdict.StatusFail, Oracle: verdict.OracleSafety,
		Message: "Creating web-x made 5 Pods", Hint: "Check the bounds before every write",
		Faults: []string{"Restarted your controller after reconcile #3"}, FaultClasses: []verdict.Fault{verdict.FaultRestart},
		Seed: 7, Replay: "judge test 171 --seed 7 --test 'rolling update'",
		Shrunk: &verdict.Shrunk{Faults: []verdict.Fault{verdict.FaultRestart}, Replay: "judge test 171 --seed 7 --test 'rolling update' --faults restart"},
		Output: "<script>alert(1)</script>",
		Trace:  []verdict.TraceLine{{Step: 1, T: 0, Actor: "controller", Event: "create Pod web-x (v1)"}},
		Timeline: []verdict.TimelinePoint{{Step: 0, Desired: 3, Actual: 3, Ready: 3},
			{Step: 1, Desired: 3, Actual: 4, Ready: 3, Mark: verdict.MarkWrite}, {Step: 2, Desired: 3, Actual: 5, Ready: 3, Mark: verdict.MarkFault}},
	}
	html := env.srv.renderPart("card", newCard(1, tr))
	for _, want := range []string{"safety", "Creating web-x made 5 Pods", "Where to look", "Check the bounds before every write",
		"Restarted your controller after reconcile #3", "Smallest case", "--faults restart", "create Pod web-x (v1)",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Error("learner output reached the page unescaped")
	}
	pass := env.srv.renderPart("card", newCard(2, &verdict.TestResult{Name: "ok", Status: verdict.StatusPass, FaultClasses: []verdict.Fault{verdict.FaultRestart, verdict.FaultDuplicate}}))
	if !strings.Contains(pass, "survived: restart, duplicate") {
		t.Errorf("passing card does not say what it survived: %s", pass)
	}
}

// A result the judge shortened to its size limit says so, on the card
// that lost its details.
func TestShortenedResultSaysSo(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	tr := &verdict.TestResult{Name: "flood", Status: verdict.StatusFail, Oracle: verdict.OracleErrors,
		Cut: "its trace, timeline and output (the result had reached 256 KiB)"}
	html := env.srv.renderPart("card", newCard(3, tr))
	if !strings.Contains(html, "Left out to keep the result small: its trace, timeline and output") {
		t.Errorf("card does not say what was left out: %s", html)
	}
}

// A real file whose panic, output and written Pod are full of terminal
// escapes and bidi overrides (judge/testdata/learner/escapes.txtar): the
// page shows every one of them escaped, none raw.
func TestLearnerTextIsInertOnThePage(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles to WebAssembly; skipped with -short")
	}
	env := newEnv(t, Config{}, nil)
	ar, err := txtar.ParseFile("../judge/testdata/learner/escapes.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var code []byte
	for _, f := range ar.Files {
		if strings.HasSuffix(f.Name, ".go") {
			code = f.Data
		}
	}
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(t.TempDir(), "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ex, _ := env.cat.Find("171")
	v := eng.Judge(context.Background(), judge.Submission{Exercise: ex, Code: code, FileName: "evil.go", Mode: verdict.ModeRun})
	if v.Outcome != verdict.OutcomeRuntimeError || !strings.Contains(v.Tests[0].Output, "\x1b[2J") {
		t.Fatalf("outcome %s, output %q: not the verdict this test is about", v.Outcome, v.Tests[0].Output)
	}
	done, err := json.Marshal(env.srv.doneEvent(v, 10))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct{ HTML string }
	json.Unmarshal(done, &ev)
	live := env.srv.renderPart("card", newCard(1, &v.Tests[0]))
	const evil = `\x1b[2J\x1b[H\x1b[32m0 failed\x1b[0m\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x0d\u0085\u009b31m\x7f\u202eevil\u2066x\u2069`
	for what, html := range map[string]string{"result": ev.HTML, "live card": live} {
		if inert := verdict.Inert(html); inert != html {
			i := 0
			for i < len(html) && html[i] == inert[i] {
				i++
			}
			t.Errorf("%s: a raw control character at byte %d: %s", what, i, inert[max(0, i-60):i+20])
		}
		for _, want := range []string{"panicked: boom:" + evil, "stdout:" + evil, "log:" + evil, "create Pod evil-0 (web:v1" + evil} {
			if !strings.Contains(html, want) {
				t.Errorf("%s lacks %q", what, want)
			}
		}
	}
}
