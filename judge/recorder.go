package judge

import (
	"strings"

	"ctrljudge/judge/verdict"
)

// maxOutputBytes caps what one test keeps of the controller's output;
// maxOutputFlood stops a controller that writes far more.
const (
	maxOutputBytes = 16 << 10
	maxOutputFlood = 64 << 10
)

// recorder writes down what a test did, for the verdict: the trace (every
// event on the virtual clock), the timeline of desired and actual state,
// the controller's writes in words, and its output. It decides nothing.
type recorder struct {
	clock    *clock
	trace    []verdict.TraceLine
	traceN   int
	timeline []verdict.TimelinePoint
	mark     verdict.Mark // what happened since the last timeline point
	writes   []string     // the controller's writes, as the writes oracle compares them
	out      *capWriter
}

func newRecorder(c *clock) *recorder {
	return &recorder{clock: c, out: &capWriter{max: maxOutputBytes}}
}

// logf adds a trace line. Only the last verdict.MaxTraceLines reach a
// verdict, so older lines are dropped now and then to bound memory.
func (r *recorder) logf(actor string, parts ...string) {
	r.traceN++
	r.trace = append(r.trace, verdict.TraceLine{Step: r.traceN, T: r.clock.now.Milliseconds(), Actor: actor, Event: clip(strings.Join(parts, ""), maxTraceEvent)})
	if len(r.trace) > 4*verdict.MaxTraceLines {
		r.trace = append(r.trace[:0], r.trace[len(r.trace)-verdict.MaxTraceLines:]...)
	}
}

// note tags the current step for the timeline; a fault outranks a write,
// a write a user's change.
func (r *recorder) note(m verdict.Mark) {
	if m.Rank() > r.mark.Rank() {
		r.mark = m
	}
}

// point adds a timeline point, tagged with what happened since the last.
func (r *recorder) point(desired, actual, ready int) {
	r.timeline = append(r.timeline, verdict.TimelinePoint{Step: len(r.timeline), T: r.clock.now.Milliseconds(),
		Desired: desired, Actual: actual, Ready: ready, Mark: r.mark})
	r.mark = ""
}

// wrote adds a controller write, in words, to the write log.
func (r *recorder) wrote(desc string) { r.writes = append(r.writes, desc) }

// traceTail is the end of the trace, which explains a failure.
func (r *recorder) traceTail() []verdict.TraceLine {
	if len(r.trace) > verdict.MaxTraceLines {
		return r.trace[len(r.trace)-verdict.MaxTraceLines:]
	}
	return r.trace
}

// timelineTail is the end of the timeline, which keeps a verdict small.
func (r *recorder) timelineTail() []verdict.TimelinePoint {
	if len(r.timeline) > maxTimelinePoints {
		return r.timeline[len(r.timeline)-maxTimelinePoints:]
	}
	return r.timeline
}

// capWriter keeps the first max bytes written and notes the overflow.
type capWriter struct {
	max       int
	b         []byte
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room < len(p) {
		if room > 0 {
			w.b = append(w.b, p[:room]...)
		}
		w.truncated = true
		return len(p), nil // keep the module running; the flag tells
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *capWriter) WriteString(s string) { w.Write([]byte(s)) }
