package web

import (
	"regexp"
	"strings"
	"testing"

	"ctrljudge/judge/verdict"
)

func TestTimelineSVG(t *testing.T) {
	if got := timelineSVG(nil); got != "" {
		t.Errorf("empty timeline drew %q", got)
	}
	pts := []verdict.TimelinePoint{
		{Step: 1, Desired: 3, Mark: "user"},
		{Step: 2, Desired: 3, Actual: 1, Mark: "write"},
		{Step: 3, Desired: 3, Actual: 1, Mark: "fault"},
		{Step: 4, Desired: 3, Actual: 2, Ready: 1, Mark: "write"},
		{Step: 5, Desired: 3, Actual: 4, Ready: 3, Mark: `"><script>alert(1)</script>`},
	}
	svg := string(timelineSVG(pts))
	for _, w := range []string{`<svg class="timeline"`, `role="img"`, "<title>Pods per step over 5 steps", "2 writes and 1 faults",
		`class="tl-desired"`, `class="tl-actual"`, `class="tl-ready"`, `<rect class="tl-user"`, `<path class="tl-fault"`} {
		if !strings.Contains(svg, w) {
			t.Errorf("svg lacks %q", w)
		}
	}
	if strings.Contains(svg, "script") {
		t.Error("an unknown mark reached the markup")
	}
	// Two write marks in the plot plus one in the legend.
	if n := strings.Count(svg, `<circle class="tl-write"`); n != 3 {
		t.Errorf("%d write circles, want 3", n)
	}
	// The actual line is a step line: two points per step after the first,
	// and its highest point (4 Pods) is at the top of the plot.
	m := regexp.MustCompile(`<polyline class="tl-actual" fill="none" points="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no actual line")
	}
	if n := len(strings.Fields(m[1])); n != 2*len(pts)-1 {
		t.Errorf("actual line has %d points, want %d", n, 2*len(pts)-1)
	}
	if !strings.HasSuffix(m[1], ",26.0") {
		t.Errorf("actual line ends at %q, want the top (y=26)", m[1][strings.LastIndex(m[1], " ")+1:])
	}
	// One point is drawn in the middle.
	if one := string(timelineSVG(pts[:1])); !strings.Contains(one, "<polyline") {
		t.Error("single-point timeline has no lines")
	}
}
