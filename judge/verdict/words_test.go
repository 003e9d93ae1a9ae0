package verdict

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// wordy is what every named constant offers.
type wordy interface {
	~string
	Title() string
	Explain() string
}

func checkWords[T wordy](t *testing.T, kind string, all []T) {
	t.Helper()
	seen := map[T]bool{}
	for _, c := range all {
		if seen[c] {
			t.Errorf("%s %q is listed twice", kind, c)
		}
		seen[c] = true
		for what, w := range map[string]string{"Title": c.Title(), "Explain": c.Explain()} {
			if w == "" || w == string(c) {
				t.Errorf("%s %q has no %s words", kind, c, what)
			}
			if strings.TrimSpace(w) != w {
				t.Errorf("%s %q: %s has stray spaces: %q", kind, c, what, w)
			}
		}
		if e := c.Explain(); !strings.HasSuffix(e, ".") && !strings.HasSuffix(e, ")") {
			t.Errorf("%s %q: Explain is not a sentence: %q", kind, c, e)
		}
	}
}

func TestEveryConstantHasWords(t *testing.T) {
	checkWords(t, "status", Statuses)
	checkWords(t, "mode", Modes)
	checkWords(t, "outcome", Outcomes)
	checkWords(t, "oracle", Oracles)
	checkWords(t, "fault", Faults)
	checkWords(t, "phase", Phases)
	checkWords(t, "mark", Marks)
	for _, o := range Oracles {
		if o.Hint() == "" || o.Hint() == string(o) {
			t.Errorf("oracle %q has no hint", o)
		}
	}
	for _, f := range Faults {
		if !f.Known() {
			t.Errorf("fault %q is not known", f)
		}
	}
	// The lists are complete: every worded constant is listed.
	if len(outcomeWords) != len(Outcomes) || len(oracleWords) != len(Oracles) || len(faultWords) != len(Faults) ||
		len(phaseWords) != len(Phases) || len(markWords) != len(Marks) || len(statusWords) != len(Statuses) || len(modeWords) != len(Modes) {
		t.Error("a worded constant is missing from its list")
	}
}

func TestTimeoutIsWork(t *testing.T) {
	// The timeout is a budget of work, not of wall-clock time.
	for _, w := range []string{OutcomeTimeout.Explain(), OracleTimeout.Explain()} {
		if !strings.Contains(w, "work") {
			t.Errorf("timeout words should speak of work: %q", w)
		}
	}
	if OutcomeTimeout.Title() != "Time limit exceeded" {
		t.Errorf("timeout title %q", OutcomeTimeout.Title())
	}
}

func TestOracleOutcome(t *testing.T) {
	for _, o := range Oracles {
		out := o.Outcome()
		if !strings.Contains(" "+strings.Join(strs(Outcomes), " ")+" ", " "+string(out)+" ") {
			t.Errorf("oracle %q gives unknown outcome %q", o, out)
		}
		if (o.Status() == StatusFail) != (out == OutcomeWrongAnswer) {
			t.Errorf("oracle %q: status %q, outcome %q", o, o.Status(), out)
		}
	}
	if OracleSetup.Outcome() != OutcomeInternalError || OracleConvergence.Outcome() != OutcomeWrongAnswer {
		t.Error("oracle outcomes")
	}
}

func TestMarkRank(t *testing.T) {
	if !(MarkNone.Rank() < MarkUser.Rank() && MarkUser.Rank() < MarkWrite.Rank() && MarkWrite.Rank() < MarkFault.Rank()) {
		t.Error("marks rank none < user < write < fault")
	}
}

func TestUnknownShowsItself(t *testing.T) {
	if Outcome("something_new").Title() != "something_new" {
		t.Error("an unknown outcome should show its name")
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	v := &Verdict{Version: 3, Status: StatusFail, Outcome: OutcomeWrongAnswer, Exercise: "x", Mode: ModeSubmit, Seed: 7,
		Tests: []TestResult{{Name: "a", Status: StatusFail, Oracle: OracleSafety, FaultClasses: []Fault{FaultRestart},
			Timeline: []TimelinePoint{{Mark: MarkFault}}, Shrunk: &Shrunk{Faults: []Fault{}}}}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(got)
	if !bytes.Equal(b, b2) {
		t.Errorf("round trip:\n%s\n%s", b, b2)
	}
	if _, err := Decode([]byte("{")); err == nil {
		t.Error("Decode accepted broken JSON")
	}
}

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
