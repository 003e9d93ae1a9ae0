package cluster

import (
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

func TestRecorderTraceIsNumberedOnTheVirtualClock(t *testing.T) {
	c := &Clock{}
	r := NewRecorder(c)
	r.Logf("user", "created ", "Deployment web")
	c.AdvanceTo(1500 * time.Millisecond)
	r.Logf("kubelet", strings.Repeat("x", 2*text.MaxTraceEvent))
	if len(r.trace) != 2 || r.trace[0] != (verdict.TraceLine{Step: 1, T: 0, Actor: "user", Event: "created Deployment web"}) {
		t.Fatalf("trace %+v", r.trace)
	}
	if l := r.trace[1]; l.Step != 2 || l.T != 1500 || len(l.Event) > text.MaxTraceEvent+32 {
		t.Fatalf("second line %+v", l)
	}
}

func TestRecorderKeepsTheEndOfALongTrace(t *testing.T) {
	r := NewRecorder(&Clock{})
	n := 5*verdict.MaxTraceLines + 7
	for i := 0; i < n; i++ {
		r.Logf("controller", "line")
	}
	if len(r.trace) > 4*verdict.MaxTraceLines {
		t.Fatalf("kept %d lines, more than 4×%d", len(r.trace), verdict.MaxTraceLines)
	}
	tail := r.TraceTail()
	if len(tail) != verdict.MaxTraceLines || tail[len(tail)-1].Step != n {
		t.Fatalf("tail of %d lines ends at step %d; want %d ending at %d", len(tail), tail[len(tail)-1].Step, verdict.MaxTraceLines, n)
	}
}

func TestRecorderMarksRankAndReset(t *testing.T) {
	r := NewRecorder(&Clock{})
	r.Note(verdict.MarkUser)
	r.Note(verdict.MarkFault)
	r.Note(verdict.MarkWrite) // a fault outranks a write
	r.Point(3, 2, 1)
	r.Point(3, 3, 3)
	if r.Timeline[0].Mark != verdict.MarkFault || r.Timeline[1].Mark != "" {
		t.Fatalf("marks %q then %q; want fault then none", r.Timeline[0].Mark, r.Timeline[1].Mark)
	}
	if p := r.Timeline[1]; p.Step != 1 || p.Desired != 3 || p.Actual != 3 || p.Ready != 3 {
		t.Fatalf("point %+v", p)
	}
	for i := 0; i < maxTimelinePoints+5; i++ {
		r.Point(0, 0, 0)
	}
	if tl := r.TimelineTail(); len(tl) != maxTimelinePoints || tl[len(tl)-1].Step != maxTimelinePoints+6 {
		t.Fatalf("timeline tail of %d points", len(tl))
	}
}

func TestCapWriterKeepsTheStartAndSaysItCut(t *testing.T) {
	w := &capWriter{max: 8}
	w.WriteString("hello ")
	if n, err := w.Write([]byte("world")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v; a full writer must not stop the module", n, err)
	}
	if string(w.Buf) != "hello wo" || !w.Truncated {
		t.Fatalf("kept %q, truncated %v", w.Buf, w.Truncated)
	}
}
