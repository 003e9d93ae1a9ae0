package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"ctrljudge/judge/verdict"
)

//go:embed templates/*.tmpl
var templates embed.FS

// Funcs are the template helpers shared by the HTML report and the
// instructor pages.
var Funcs = template.FuncMap{
	"pct":      pct,
	"duration": Duration,
	"when": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if t == nil {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
		return ""
	},
	"status":      StatusLabel,
	"hbar":        HBarChart,
	"hist":        Histogram,
	"countBars":   CountBars,
	"outcomeBars": OutcomeBars,
	"add":         func(a, b int) int { return a + b },
	// inert shows what a learner chose, names and code, with its control
	// characters and bidi overrides escaped (verdict.Inert).
	"inert": verdict.Inert,
}

// CountBars turns counts into bars of the share of learners.
func CountBars(cs []Count) []Bar {
	var bars []Bar
	for _, c := range cs {
		bars = append(bars, Bar{Label: c.Name, Value: c.Share, Text: fmt.Sprintf("%s (%d)", pct(c.Share), c.Learners)})
	}
	return bars
}

var reportTmpl = template.Must(template.New("report.html.tmpl").Funcs(Funcs).ParseFS(templates, "templates/report.html.tmpl"))

// OutcomeBars are outcomes said in words, each bar its share of the
// submits (they add up to 100 %), the number of submits in brackets.
func OutcomeBars(cs []Count) []Bar {
	var bars []Bar
	for _, c := range cs {
		bars = append(bars, Bar{Label: verdict.Outcome(c.Name).Title(), Value: c.Share,
			Text: fmt.Sprintf("%s (%d)", pct(c.Share), c.Submissions)})
	}
	return bars
}

// StatusLabel says a matrix cell's status in words.
func StatusLabel(s string) string {
	switch s {
	case StatusSolved:
		return "solved"
	case StatusSolvedLate:
		return "solved late"
	case StatusAttempted:
		return "attempted"
	}
	return "not started"
}

type pairView struct {
	*Pair
	Left, Right []CodeLine
}

// WriteHTML writes the report as one self-contained HTML page: styles and
// SVG charts inline, nothing fetched.
func (r *Report) WriteHTML(w io.Writer) error {
	var solved []Bar
	for i, e := range r.Exercises {
		a := r.Analytics[i]
		solved = append(solved, Bar{Label: e.Label(), Value: ratio(a.Solved, max(a.Learners, 1)),
			Text: fmt.Sprintf("%d of %d", a.Solved, a.Learners)})
	}
	var pairs []pairView
	for _, p := range r.Similarity.Pairs {
		la, lb := SharedLines([]byte(r.code[p.A.Submission]), []byte(r.code[p.B.Submission]), r.starter(p.Exercise))
		pairs = append(pairs, pairView{p, MarkedCode(r.code[p.A.Submission], la), MarkedCode(r.code[p.B.Submission], lb)})
	}
	data := struct {
		*Report
		Solved template.HTML
		Pairs  []pairView
	}{r, HBarChart("Learners who solved each exercise", solved), pairs}
	if err := reportTmpl.Execute(w, data); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func (r *Report) starter(slug string) []byte {
	for _, e := range r.Exercises {
		if e.Slug == slug {
			return e.starter
		}
	}
	return nil
}

// ExerciseAnalytics pairs each exercise with its analytics, for templates.
func (r *Report) ExerciseAnalytics() []struct {
	Exercise  ExerciseInfo
	Analytics *Analytics
} {
	out := make([]struct {
		Exercise  ExerciseInfo
		Analytics *Analytics
	}, len(r.Exercises))
	for i := range r.Exercises {
		out[i].Exercise, out[i].Analytics = r.Exercises[i], r.Analytics[i]
	}
	return out
}
