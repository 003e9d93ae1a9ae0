package web

import (
	"fmt"
	"html/template"
	"strings"

	"ctrljudge/judge/verdict"
)

// Timeline picture geometry, in SVG user units.
const (
	tlWidth   = 600
	tlHeight  = 200
	tlLeft    = 34
	tlRight   = 16
	tlTop     = 30
	tlBottom  = 48
	tlMarkRow = tlHeight - tlBottom + 14
)

// placed is a timeline point at a step of the trace table.
type placed struct {
	verdict.TimelinePoint
	at int // trace step
}

// placeOnTrace puts each timeline point at the trace step it was
// sampled after (TimelinePoint.TraceStep), clamped to the trace's span so
// that points older than its first line (the trace keeps only the end of
// a run) start the line from the value then in force. A verdict that
// records no trace steps places its points by their own count.
func placeOnTrace(points []verdict.TimelinePoint, trace []verdict.TraceLine) []placed {
	out := make([]placed, len(points))
	byTrace := len(trace) > 0
	for _, p := range points {
		byTrace = byTrace && p.TraceStep > 0
	}
	for i, p := range points {
		out[i] = placed{p, p.Step}
		if byTrace {
			out[i].at = max(p.TraceStep, trace[0].Step)
		}
	}
	return out
}

// timelineSVG draws a failing test's desired, actual and ready Pods as
// step lines over the steps of its trace table, with the controller's
// writes, injected faults and user actions marked under the axis; for a
// safety failure also the bound and the write that broke it. Only numbers
// and fixed words reach the markup.
//
// Every number comes from the verdict's fields: each point's trace step
// (TimelinePoint.TraceStep) and the violating write's count, bound and
// step (TestResult.Violation). The run ends at the violating write, before
// the next sample, so the picture adds a last point with its count.
func timelineSVG(t *verdict.TestResult) template.HTML {
	points := t.Timeline
	if len(points) == 0 {
		return ""
	}
	pts := placeOnTrace(points, t.Trace)
	byTrace := len(t.Trace) > 0 && pts[0].TraceStep > 0
	viol := t.Violation
	if t.Oracle != verdict.OracleSafety || viol != nil && (viol.Line != verdict.LineActual && viol.Line != verdict.LineReady || !byTrace) {
		viol = nil
	}
	violAt := -1
	if viol != nil {
		violAt = viol.Step
	}

	lo, hi := pts[0].at, pts[len(pts)-1].at
	if byTrace {
		lo, hi = t.Trace[0].Step, t.Trace[len(t.Trace)-1].Step
	}
	if hi <= lo {
		hi = lo + 1
	}
	top := 1
	writes, faults := 0, 0
	for _, p := range pts {
		top = max(top, p.Desired, p.Actual, p.Ready)
		switch p.Mark {
		case verdict.MarkWrite:
			writes++
		case verdict.MarkFault:
			faults++
		}
	}
	if viol != nil {
		top = max(top, viol.Value, viol.Bound)
	}
	// One step of headroom, so the highest line does not run on the frame.
	top++
	plotW := float64(tlWidth - tlLeft - tlRight)
	plotH := float64(tlHeight - tlTop - tlBottom)
	x := func(step int) float64 { return tlLeft + plotW*float64(step-lo)/float64(hi-lo) }
	y := func(v int) float64 { return tlTop + plotH*(1-float64(v)/float64(top)) }

	// A violation adds the value its write reached, at its step.
	if viol != nil && violAt >= 0 {
		last := pts[len(pts)-1]
		p := placed{last.TimelinePoint, max(violAt, last.at)}
		p.Mark = verdict.MarkWrite
		if viol.Line == verdict.LineActual {
			p.Actual = viol.Value
		} else {
			p.Ready = viol.Value
		}
		pts = append(pts, p)
	}
	line := func(class string, val func(placed) int) string {
		var b strings.Builder
		for i, p := range pts {
			if i > 0 {
				fmt.Fprintf(&b, " %.1f,%.1f", x(p.at), y(val(pts[i-1])))
			}
			fmt.Fprintf(&b, " %.1f,%.1f", x(p.at), y(val(p)))
		}
		// The last value holds to the end of the table.
		if end := pts[len(pts)-1]; end.at < hi {
			fmt.Fprintf(&b, " %.1f,%.1f", x(hi), y(val(end)))
		}
		return fmt.Sprintf(`<polyline class="tl-%s" fill="none" points="%s"/>`, class, strings.TrimSpace(b.String()))
	}

	var b strings.Builder
	// The title doubles as the picture's text alternative.
	title := fmt.Sprintf("Pods from step %d to step %d of the table below: desired (dashed), actual and ready; %d writes and %d faults marked below the axis.",
		lo, hi, writes, faults)
	if viol != nil && violAt >= 0 {
		if viol.Line == verdict.LineActual {
			title += fmt.Sprintf(" The write at step %d made %d Pods, over the limit of %d.", violAt, viol.Value, viol.Bound)
		} else {
			title += fmt.Sprintf(" The write at step %d left %d Ready, under the minimum of %d.", violAt, viol.Value, viol.Bound)
		}
	}
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %d %d" role="img" aria-label="%s">`, tlWidth, tlHeight, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(title))

	// The y-axis: every whole number up to 8, else about five to eight.
	every := 1
	for _, c := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} {
		if every = c; top/c <= 8 {
			break
		}
	}
	for v := 0; v <= top; v += every {
		if v > 0 {
			fmt.Fprintf(&b, `<line class="tl-grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, tlLeft, y(v), tlWidth-tlRight, y(v))
		}
		fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%.1f" text-anchor="end">%d</text>`, tlLeft-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<line class="tl-axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, tlLeft, y(0), tlWidth-tlRight, y(0))

	// The x-axis: the table's step numbers.
	xevery := 1
	for _, c := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} {
		if xevery = c; (hi-lo)/c <= 12 {
			break
		}
	}
	for s := lo; s <= hi; s++ {
		if s != lo && s != hi && s%xevery != 0 {
			continue
		}
		if s != hi && hi-s < xevery/2 {
			continue
		}
		fmt.Fprintf(&b, `<line class="tl-axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x(s), y(0), x(s), y(0)+3)
		fmt.Fprintf(&b, `<text class="tl-label" x="%.1f" y="%d" text-anchor="middle">%d</text>`, x(s), tlHeight-6, s)
	}
	fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%d" text-anchor="end">step</text>`, tlLeft-6, tlHeight-6)

	// The bound, from the step where the desired count last changed.
	if viol != nil {
		from := lo
		for i := 1; i < len(pts); i++ {
			if pts[i].Desired != pts[i-1].Desired {
				from = pts[i].at
			}
		}
		word := "at most"
		if viol.Line != verdict.LineActual {
			word = "at least"
		}
		fmt.Fprintf(&b, `<line class="tl-bound" x1="%.1f" y1="%.1f" x2="%d" y2="%.1f"/>`, x(from), y(viol.Bound), tlWidth-tlRight, y(viol.Bound))
		fmt.Fprintf(&b, `<text class="tl-label tl-bound-label" x="%.1f" y="%.1f">%s %d</text>`, x(from)+4, y(viol.Bound)-4, word, viol.Bound)
	}

	// Marks: one row under the axis.
	for _, p := range pts {
		cx := x(p.at)
		switch p.Mark {
		case verdict.MarkWrite:
			fmt.Fprintf(&b, `<circle class="tl-write" cx="%.1f" cy="%d" r="3"/>`, cx, tlMarkRow)
		case verdict.MarkFault:
			fmt.Fprintf(&b, `<path class="tl-fault" d="M%.1f %d l4.5 8 h-9 z"/>`, cx, tlMarkRow-5)
			fmt.Fprintf(&b, `<line class="tl-fault-line" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/>`, cx, tlTop, cx, y(0))
		case verdict.MarkUser:
			fmt.Fprintf(&b, `<rect class="tl-user" x="%.1f" y="%d" width="6" height="6"/>`, cx-3, tlMarkRow-3)
		}
	}
	b.WriteString(line("ready", func(p placed) int { return p.Ready }))
	b.WriteString(line("actual", func(p placed) int { return p.Actual }))
	b.WriteString(line("desired", func(p placed) int { return p.Desired }))

	// The violating write: a ring on the line it broke, and its step.
	if viol != nil && violAt >= 0 {
		vx, vy := x(violAt), y(viol.Value)
		fmt.Fprintf(&b, `<line class="tl-violation-line" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/>`, vx, tlTop, vx, y(0))
		fmt.Fprintf(&b, `<circle class="tl-violation" cx="%.1f" cy="%.1f" r="5.5"/>`, vx, vy)
		anchor, dx := "end", -8.0
		if vx < tlLeft+plotW/2 {
			anchor, dx = "start", 8
		}
		fmt.Fprintf(&b, `<text class="tl-label tl-violation-label" x="%.1f" y="%.1f" text-anchor="%s">✗ step %d: %d</text>`, vx+dx, vy+4, anchor, violAt, viol.Value)
	}

	// Legend along the top.
	legend := []struct{ class, word string }{{"desired", "desired"}, {"actual", "actual"}, {"ready", "ready"}}
	lx := tlLeft
	for _, l := range legend {
		fmt.Fprintf(&b, `<line class="tl-%s" x1="%d" y1="10" x2="%d" y2="10"/><text class="tl-label" x="%d" y="14">%s</text>`, l.class, lx, lx+18, lx+22, l.word)
		lx += 76
	}
	fmt.Fprintf(&b, `<circle class="tl-write" cx="%d" cy="10" r="3"/><text class="tl-label" x="%d" y="14">write</text>`, lx+4, lx+12)
	lx += 58
	fmt.Fprintf(&b, `<path class="tl-fault" d="M%d 5 l4.5 8 h-9 z"/><text class="tl-label" x="%d" y="14">fault</text>`, lx+4, lx+12)
	lx += 56
	fmt.Fprintf(&b, `<rect class="tl-user" x="%d" y="7" width="6" height="6"/><text class="tl-label" x="%d" y="14">user</text>`, lx+1, lx+12)
	lx += 54
	if viol != nil {
		fmt.Fprintf(&b, `<line class="tl-bound" x1="%d" y1="10" x2="%d" y2="10"/><text class="tl-label" x="%d" y="14">limit</text>`, lx, lx+18, lx+22)
		lx += 62
		fmt.Fprintf(&b, `<circle class="tl-violation" cx="%d" cy="10" r="4"/><text class="tl-label" x="%d" y="14">violation</text>`, lx+4, lx+12)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
