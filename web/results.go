package web

import (
	"bytes"
	"html/template"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// card is one test's result as the page shows it.
type card struct {
	Index    int
	Test     *verdict.TestResult
	Pass     bool
	Open     bool // shown unfolded: the first failing card only
	Trace    []verdict.TraceLine
	TraceCut int // lines left out at the start
	Timeline template.HTML
}

func newCard(index int, t *verdict.TestResult) card {
	c := card{Index: index, Test: t, Pass: t.Status == verdict.StatusPass}
	c.Open = !c.Pass
	c.Trace = t.Trace
	if n := len(c.Trace); n > verdict.MaxTraceLines {
		c.TraceCut = n - verdict.MaxTraceLines
		c.Trace = c.Trace[c.TraceCut:]
	}
	if !c.Pass {
		c.Timeline = timelineSVG(t)
	}
	return c
}

// results is a whole verdict as the page shows it.
type results struct {
	Verdict *verdict.Verdict
	Title   string
	Total   int
	Ms      int64
	Cards   []card
	Failed  []card             // the failing cards, for the summary at the top
	Only    string             // a run of this one test, not of the sample tests
	Next    *exercise.Exercise // after an accepted submit: where to go on
}

func newResults(v *verdict.Verdict, ms int64) results {
	r := results{Verdict: v, Title: v.Outcome.Title(), Total: len(v.Tests), Ms: ms}
	for i := range v.Tests {
		c := newCard(i+1, &v.Tests[i])
		c.Open = !c.Pass && len(r.Failed) == 0
		r.Cards = append(r.Cards, c)
		if !c.Pass {
			r.Failed = append(r.Failed, c)
		}
	}
	return r
}

// newResults is newResults with what the exercise adds: whether the run
// judged one test, and the next exercise after an accepted submit.
func (s *Server) newResults(ex *exercise.Exercise, v *verdict.Verdict, ms int64) results {
	r := newResults(v, ms)
	r.Only = onlyTest(ex, v)
	if ex != nil && v.Mode == verdict.ModeSubmit && v.Outcome == verdict.OutcomeAccepted {
		r.Next = s.next(ex, nil)
	}
	return r
}

// doneEvent is the stream's final event for a verdict: the whole result,
// rendered, plus what the page's script needs to act on it.
func (s *Server) doneEvent(v *verdict.Verdict, ms int64) map[string]any {
	ex, _ := s.cat.Find(v.Exercise)
	// The script shows the diagnostics beside the code as they are.
	var diags []verdict.Diagnostic
	for _, d := range v.Diagnostics {
		d.Message = verdict.Inert(d.Message)
		diags = append(diags, d)
	}
	return map[string]any{
		"outcome":     v.Outcome,
		"title":       v.Outcome.Title(),
		"passed":      v.Passed,
		"total":       len(v.Tests),
		"mode":        v.Mode,
		"diagnostics": diags,
		"solved":      v.Mode == verdict.ModeSubmit && v.Outcome == verdict.OutcomeAccepted,
		"html":        s.renderPart("results", s.newResults(ex, v, ms)),
	}
}

// renderPart executes a shared template (from parts.html) to a string.
func (s *Server) renderPart(name string, data any) string {
	var b bytes.Buffer
	// Any page set holds the parts.
	if err := s.pages["home"].ExecuteTemplate(&b, name, data); err != nil {
		s.log.Error("render part", "part", name, "err", err)
		return ""
	}
	return b.String()
}
