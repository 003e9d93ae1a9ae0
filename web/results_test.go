package web

import (
	"strings"
	"testing"

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
