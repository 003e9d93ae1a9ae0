package web

import (
	"bytes"
	"html/template"

	"ctrljudge/judge"
)

// maxTraceLines caps the trace shown on a card; the end of a run is what
// explains it.
const maxTraceLines = 40

// card is one test's result as the page shows it.
type card struct {
	Index      int
	Test       *judge.TestResult
	Pass       bool
	Trace      []judge.TraceLine
	TraceCut   int // lines left out at the start
	Timeline   template.HTML
	OracleText string
}

func newCard(index int, t *judge.TestResult) card {
	c := card{Index: index, Test: t, Pass: t.Status == judge.StatusPass, OracleText: oracleWords[t.Oracle]}
	c.Trace = t.Trace
	if n := len(c.Trace); n > maxTraceLines {
		c.TraceCut = n - maxTraceLines
		c.Trace = c.Trace[c.TraceCut:]
	}
	if !c.Pass {
		c.Timeline = timelineSVG(t.Timeline)
	}
	return c
}

// results is a whole verdict as the page shows it.
type results struct {
	Verdict *judge.Verdict
	Title   string
	Total   int
	Ms      int64
	Cards   []card
}

func newResults(v *judge.Verdict, ms int64) results {
	r := results{Verdict: v, Title: outcomeTitle(v.Outcome), Total: len(v.Tests), Ms: ms}
	for i := range v.Tests {
		r.Cards = append(r.Cards, newCard(i+1, &v.Tests[i]))
	}
	return r
}

// doneEvent is the stream's final event for a verdict: the whole result,
// rendered, plus what the page's script needs to act on it.
func (s *Server) doneEvent(v *judge.Verdict, ms int64) map[string]any {
	return map[string]any{
		"outcome":     v.Outcome,
		"passed":      v.Passed,
		"total":       len(v.Tests),
		"mode":        v.Mode,
		"diagnostics": v.Diagnostics,
		"solved":      v.Mode == judge.ModeSubmit && v.Outcome == judge.OutcomeAccepted,
		"html":        s.renderPart("results", newResults(v, ms)),
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
