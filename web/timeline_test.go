package web

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ctrljudge/judge/verdict"
)

func TestTimelineSVG(t *testing.T) {
	if got := timelineSVG(&verdict.TestResult{}); got != "" {
		t.Errorf("empty timeline drew %q", got)
	}
	pts := []verdict.TimelinePoint{
		{Step: 1, Desired: 3, Mark: "user"},
		{Step: 2, Desired: 3, Actual: 1, Mark: "write"},
		{Step: 3, Desired: 3, Actual: 1, Mark: "fault"},
		{Step: 4, Desired: 3, Actual: 2, Ready: 1, Mark: "write"},
		{Step: 5, Desired: 3, Actual: 4, Ready: 3, Mark: `"><script>alert(1)</script>`},
	}
	svg := string(timelineSVG(&verdict.TestResult{Status: verdict.StatusFail, Timeline: pts}))
	for _, w := range []string{`<svg class="timeline"`, `role="img"`, "<title>Pods from step 1 to step 5", "2 writes and 1 faults",
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
	// The actual line is a step line: two points per step after the first.
	m := regexp.MustCompile(`<polyline class="tl-actual" fill="none" points="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no actual line")
	}
	if n := len(strings.Fields(m[1])); n != 2*len(pts)-1 {
		t.Errorf("actual line has %d points, want %d", n, 2*len(pts)-1)
	}
	if strings.Contains(svg, "tl-bound") {
		t.Error("a bound drawn for a failure that names none")
	}
	// One point is drawn in the middle.
	if one := string(timelineSVG(&verdict.TestResult{Timeline: pts[:1]})); !strings.Contains(one, "<polyline") {
		t.Error("single-point timeline has no lines")
	}
}

// A safety failure as the engine reports it for the starter of 171
// ("rolling update with maxSurge 1 and maxUnavailable 0"): the timeline
// stops at 4 Pods, because the violating write ends the run before the
// next sample, and its points count samples while the table counts steps.
// The words of the message play no part: they say other numbers here.
func TestTimelineShowsTheViolation(t *testing.T) {
	tr := &verdict.TestResult{
		Name: "rolling update", Status: verdict.StatusFail, Oracle: verdict.OracleSafety,
		Message: "Creating web-cspl5 made 7 Pods for Deployment web; with replicas 3 and maxSurge 1 there may be at most 9.",
		Timeline: []verdict.TimelinePoint{
			{Step: 0, T: 0, Desired: 3, Actual: 3, Ready: 3, TraceStep: 9},
			{Step: 1, T: 0, Desired: 3, Actual: 4, Ready: 3, Mark: verdict.MarkWrite, TraceStep: 11},
		},
		Violation: &verdict.Violation{Line: verdict.LineActual, Value: 5, Bound: 4, Step: 14},
	}
	lines := []struct {
		t     int64
		actor string
		event string
	}{
		{0, "user", "the test starts with Deployment web"},
		{0, "user", "the test starts with Pod web-0a"},
		{0, "user", "the test starts with Pod web-0b"},
		{0, "user", "the test starts with Pod web-0c"},
		{0, "controller", "reconcile default/web (#1)"},
		{0, "controller", "create Pod web-562p8 (web:v1)"},
		{2000, "kubelet", "Pod web-562p8 is Running and Ready"},
		{2000, "controller", "reconcile default/web (#2)"},
		{2000, "controller", "create Pod web-cspl5 (web:v1)"},
		{2000, "judge", "✗ Creating web-cspl5 made 5 Pods"},
	}
	for i, l := range lines {
		tr.Trace = append(tr.Trace, verdict.TraceLine{Step: i + 6, T: l.t, Actor: l.actor, Event: l.event})
	}
	// The points fall on the table's steps: the set-up before the first
	// reconcile, then after it.
	placedAt := placeOnTrace(tr.Timeline, tr.Trace)
	if placedAt[0].at != 9 || placedAt[1].at != 11 {
		t.Errorf("points placed at steps %d and %d, want 9 and 11", placedAt[0].at, placedAt[1].at)
	}
	svg := string(timelineSVG(tr))
	labels := map[string]bool{}
	for _, m := range regexp.MustCompile(`<text class="tl-label"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		labels[m[1]] = true
	}
	// The y-axis reaches the 5 Pods the violation names.
	for v := 0; v <= 5; v++ {
		if !labels[strconv.Itoa(v)] {
			t.Errorf("y-axis lacks %d: %v", v, labels)
		}
	}
	// The x-axis counts the table's steps, 6 to 15.
	for _, s := range []string{"6", "15", "step"} {
		if !labels[s] {
			t.Errorf("x-axis lacks %q: %v", s, labels)
		}
	}
	if labels["0"] && strings.Contains(svg, ">step 0<") {
		t.Error("x-axis still counts samples")
	}
	// The bound and the violating write.
	for _, w := range []string{`class="tl-bound"`, ">at most 4<", `class="tl-violation"`, "✗ step 14: 5", "The write at step 14 made 5 Pods, over the limit of 4."} {
		if !strings.Contains(svg, w) {
			t.Errorf("svg lacks %q", w)
		}
	}
	// The actual line ends at 5 Pods at step 14.
	m := regexp.MustCompile(`<polyline class="tl-actual" fill="none" points="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no actual line")
	}
	if !strings.Contains(svg, `<circle class="tl-violation" cx="`) {
		t.Fatal("no violation ring")
	}
	ring := regexp.MustCompile(`<circle class="tl-violation" cx="([0-9.]+)" cy="([0-9.]+)"`).FindStringSubmatch(svg)
	if !strings.Contains(m[1], ring[1]+","+ring[2]) {
		t.Errorf("the ring (%s,%s) is not on the actual line %s", ring[1], ring[2], m[1])
	}

	// A lower bound: deleting a Ready Pod.
	tr.Violation = &verdict.Violation{Line: verdict.LineReady, Value: 1, Bound: 2, Step: 14}
	if svg := string(timelineSVG(tr)); !strings.Contains(svg, ">at least 2<") || !strings.Contains(svg, "left 1 Ready, under the minimum of 2") {
		t.Errorf("lower bound not drawn: %s", svg)
	}
}

// A verdict stored before points carried their trace step draws its
// points by their count, and no violation: nothing is read from words.
func TestTimelineWithoutTraceSteps(t *testing.T) {
	tr := &verdict.TestResult{Status: verdict.StatusFail, Oracle: verdict.OracleSafety,
		Message:  "Creating web-x made 5 Pods for Deployment web; with replicas 3 and maxSurge 1 there may be at most 4.",
		Timeline: []verdict.TimelinePoint{{Step: 0, Desired: 3, Actual: 3}, {Step: 1, Desired: 3, Actual: 4}},
		Trace:    []verdict.TraceLine{{Step: 40, Actor: "user", Event: "x"}, {Step: 41, Actor: "judge", Event: "✗"}},
	}
	svg := string(timelineSVG(tr))
	if !strings.Contains(svg, "from step 0 to step 1") || strings.Contains(svg, "tl-violation") {
		t.Errorf("old verdict drawn against the trace or with a violation read from its words: %s", svg)
	}
}
