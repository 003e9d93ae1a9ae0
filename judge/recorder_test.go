package judge

import (
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/verdict"
)

func TestRecorderTraceIsNumberedOnTheVirtualClock(t *testing.T) {
	c := &clock{}
	r := newRecorder(c)
	r.logf("user", "created ", "Deployment web")
	c.advanceTo(1500 * time.Millisecond)
	r.logf("kubelet", strings.Repeat("x", 2*maxTraceEvent))
	if len(r.trace) != 2 || r.trace[0] != (verdict.TraceLine{Step: 1, T: 0, Actor: "user", Event: "created Deployment web"}) {
		t.Fatalf("trace %+v", r.trace)
	}
	if l := r.trace[1]; l.Step != 2 || l.T != 1500 || len(l.Event) > maxTraceEvent+32 {
		t.Fatalf("second line %+v", l)
	}
}

func TestRecorderKeepsTheEndOfALongTrace(t *testing.T) {
	r := newRecorder(&clock{})
	n := 5*verdict.MaxTraceLines + 7
	for i := 0; i < n; i++ {
		r.logf("controller", "line")
	}
	if len(r.trace) > 4*verdict.MaxTraceLines {
		t.Fatalf("kept %d lines, more than 4×%d", len(r.trace), verdict.MaxTraceLines)
	}
	tail := r.traceTail()
	if len(tail) != verdict.MaxTraceLines || tail[len(tail)-1].Step != n {
		t.Fatalf("tail of %d lines ends at step %d; want %d ending at %d", len(tail), tail[len(tail)-1].Step, verdict.MaxTraceLines, n)
	}
}

func TestRecorderMarksRankAndReset(t *testing.T) {
	r := newRecorder(&clock{})
	r.note(verdict.MarkUser)
	r.note(verdict.MarkFault)
	r.note(verdict.MarkWrite) // a fault outranks a write
	r.point(3, 2, 1)
	r.point(3, 3, 3)
	if r.timeline[0].Mark != verdict.MarkFault || r.timeline[1].Mark != "" {
		t.Fatalf("marks %q then %q; want fault then none", r.timeline[0].Mark, r.timeline[1].Mark)
	}
	if p := r.timeline[1]; p.Step != 1 || p.Desired != 3 || p.Actual != 3 || p.Ready != 3 {
		t.Fatalf("point %+v", p)
	}
	for i := 0; i < maxTimelinePoints+5; i++ {
		r.point(0, 0, 0)
	}
	if tl := r.timelineTail(); len(tl) != maxTimelinePoints || tl[len(tl)-1].Step != maxTimelinePoints+6 {
		t.Fatalf("timeline tail of %d points", len(tl))
	}
}

func TestCapWriterKeepsTheStartAndSaysItCut(t *testing.T) {
	w := &capWriter{max: 8}
	w.WriteString("hello ")
	if n, err := w.Write([]byte("world")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v; a full writer must not stop the module", n, err)
	}
	if string(w.b) != "hello wo" || !w.truncated {
		t.Fatalf("kept %q, truncated %v", w.b, w.truncated)
	}
}
