package web

import (
	"strings"
	"testing"

	"ctrljudge/judge"
)

// A failing card carries everything a learner needs to understand the
// failure, with the learner's own text escaped.
func TestFailingCardExplainsItself(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	tr := &judge.TestResult{
		Name: "rolling update", Status: judge.StatusFail, Oracle: "safety",
		Message: "Creating web-x made 5 Pods", Hint: "Check the bounds before every write",
		Faults: []string{"Restarted your controller after reconcile #3"}, FaultClasses: []string{"restart"},
		Seed: 7, Replay: "judge test 171 --seed 7 --test 'rolling update'",
		Shrunk: &judge.Shrunk{Faults: []string{"restart"}, Replay: "judge test 171 --seed 7 --test 'rolling update' --faults restart"},
		Output: "<script>alert(1)</script>",
		Trace:  []judge.TraceLine{{Step: 1, T: 0, Actor: "controller", Event: "create Pod web-x (v1)"}},
		Timeline: []judge.TimelinePoint{{Step: 0, Desired: 3, Actual: 3, Ready: 3},
			{Step: 1, Desired: 3, Actual: 4, Ready: 3, Mark: "write"}, {Step: 2, Desired: 3, Actual: 5, Ready: 3, Mark: "fault"}},
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
	pass := env.srv.renderPart("card", newCard(2, &judge.TestResult{Name: "ok", Status: judge.StatusPass, FaultClasses: []string{"restart", "duplicate"}}))
	if !strings.Contains(pass, "survived: restart, duplicate") {
		t.Errorf("passing card does not say what it survived: %s", pass)
	}
}
