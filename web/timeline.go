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
	tlHeight  = 180
	tlLeft    = 34
	tlRight   = 12
	tlTop     = 26
	tlBottom  = 40
	tlMarkRow = tlHeight - tlBottom + 14
)

// timelineSVG draws desired, actual and ready Pods per step as step lines,
// with the controller's writes, injected faults and user actions marked
// under the axis. Only numbers and fixed words reach the markup.
func timelineSVG(points []verdict.TimelinePoint) template.HTML {
	if len(points) == 0 {
		return ""
	}
	top := 1
	writes, faults := 0, 0
	for _, p := range points {
		top = max(top, p.Desired, p.Actual, p.Ready)
		switch p.Mark {
		case "write":
			writes++
		case "fault":
			faults++
		}
	}
	plotW := float64(tlWidth - tlLeft - tlRight)
	plotH := float64(tlHeight - tlTop - tlBottom)
	x := func(i int) float64 {
		if len(points) == 1 {
			return tlLeft + plotW/2
		}
		return tlLeft + plotW*float64(i)/float64(len(points)-1)
	}
	y := func(v int) float64 { return tlTop + plotH*(1-float64(v)/float64(top)) }
	line := func(class string, val func(verdict.TimelinePoint) int) string {
		var b strings.Builder
		for i, p := range points {
			if i > 0 {
				fmt.Fprintf(&b, " %.1f,%.1f", x(i), y(val(points[i-1])))
			}
			fmt.Fprintf(&b, " %.1f,%.1f", x(i), y(val(p)))
		}
		return fmt.Sprintf(`<polyline class="tl-%s" fill="none" points="%s"/>`, class, strings.TrimSpace(b.String()))
	}

	var b strings.Builder
	// The title doubles as the picture's text alternative.
	title := fmt.Sprintf("Pods per step over %d steps: desired (dashed), actual and ready; %d writes and %d faults marked below the axis.",
		points[len(points)-1].Step, writes, faults)
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %d %d" role="img" aria-label="%s">`, tlWidth, tlHeight, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(title))
	// Axes and the top value.
	fmt.Fprintf(&b, `<line class="tl-axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, tlLeft, y(0), tlWidth-tlRight, y(0))
	fmt.Fprintf(&b, `<line class="tl-grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, tlLeft, y(top), tlWidth-tlRight, y(top))
	fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%.1f" text-anchor="end">%d</text>`, tlLeft-6, y(top)+4, top)
	fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%.1f" text-anchor="end">0</text>`, tlLeft-6, y(0)+4)
	fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%d" text-anchor="end">step %d</text>`, tlWidth-tlRight, tlHeight-4, points[len(points)-1].Step)
	fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%d">step %d</text>`, tlLeft, tlHeight-4, points[0].Step)
	// Marks: one row under the axis.
	for i, p := range points {
		cx := x(i)
		switch p.Mark {
		case "write":
			fmt.Fprintf(&b, `<circle class="tl-write" cx="%.1f" cy="%d" r="3"/>`, cx, tlMarkRow)
		case "fault":
			fmt.Fprintf(&b, `<path class="tl-fault" d="M%.1f %d l4.5 8 h-9 z"/>`, cx, tlMarkRow-5)
			fmt.Fprintf(&b, `<line class="tl-fault-line" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/>`, cx, tlTop, cx, y(0))
		case "user":
			fmt.Fprintf(&b, `<rect class="tl-user" x="%.1f" y="%d" width="6" height="6"/>`, cx-3, tlMarkRow-3)
		}
	}
	b.WriteString(line("ready", func(p verdict.TimelinePoint) int { return p.Ready }))
	b.WriteString(line("actual", func(p verdict.TimelinePoint) int { return p.Actual }))
	b.WriteString(line("desired", func(p verdict.TimelinePoint) int { return p.Desired }))
	// Legend along the top.
	legend := []struct{ class, word string }{{"desired", "desired"}, {"actual", "actual"}, {"ready", "ready"}}
	lx := tlLeft
	for _, l := range legend {
		fmt.Fprintf(&b, `<line class="tl-%s" x1="%d" y1="10" x2="%d" y2="10"/><text class="tl-label" x="%d" y="14">%s</text>`, l.class, lx, lx+18, lx+22, l.word)
		lx += 82
	}
	fmt.Fprintf(&b, `<circle class="tl-write" cx="%d" cy="10" r="3"/><text class="tl-label" x="%d" y="14">write</text>`, lx+4, lx+12)
	lx += 64
	fmt.Fprintf(&b, `<path class="tl-fault" d="M%d 5 l4.5 8 h-9 z"/><text class="tl-label" x="%d" y="14">fault</text>`, lx+4, lx+12)
	lx += 64
	fmt.Fprintf(&b, `<rect class="tl-user" x="%d" y="7" width="6" height="6"/><text class="tl-label" x="%d" y="14">user</text>`, lx+1, lx+12)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
