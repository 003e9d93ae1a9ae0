package cluster

import (
	"strings"

	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// maxOutputBytes caps what one test keeps of the controller's output;
// maxOutputFlood stops a controller that writes far more.
const (
	maxTimelinePoints = 300
	MaxOutputBytes    = 16 << 10
	MaxOutputFlood    = 64 << 10
)

// Recorder writes down what a test did, for the verdict: the trace (every
// event on the virtual clock), the timeline of desired and actual state,
// the controller's writes in words, and its output. It decides nothing.
type Recorder struct {
	clock    *Clock
	trace    []verdict.TraceLine
	traceN   int
	Timeline []verdict.TimelinePoint
	mark     verdict.Mark // what happened since the last timeline point
	Writes   []string     // the controller's writes, as the writes oracle compares them
	Out      *capWriter
}

func NewRecorder(c *Clock) *Recorder {
	return &Recorder{clock: c, Out: &capWriter{max: MaxOutputBytes}}
}

// Logf adds a trace line. Only the last verdict.MaxTraceLines reach a
// verdict, so older lines are dropped now and then to bound memory.
func (r *Recorder) Logf(actor string, parts ...string) {
	r.traceN++
	r.trace = append(r.trace, verdict.TraceLine{Step: r.traceN, T: r.clock.Now.Milliseconds(), Actor: actor, Event: text.Clip(strings.Join(parts, ""), text.MaxTraceEvent)})
	if len(r.trace) > 4*verdict.MaxTraceLines {
		r.trace = append(r.trace[:0], r.trace[len(r.trace)-verdict.MaxTraceLines:]...)
	}
}

// Note tags the current step for the timeline; a fault outranks a write,
// a write a user's change.
func (r *Recorder) Note(m verdict.Mark) {
	if m.Rank() > r.mark.Rank() {
		r.mark = m
	}
}

// Point adds a timeline point, tagged with what happened since the last.
func (r *Recorder) Point(desired, actual, ready int) {
	r.Timeline = append(r.Timeline, verdict.TimelinePoint{Step: len(r.Timeline), T: r.clock.Now.Milliseconds(),
		Desired: desired, Actual: actual, Ready: ready, Mark: r.mark, TraceStep: r.traceN})
	r.mark = ""
}

// Step is the step of the trace's last line.
func (r *Recorder) Step() int { return r.traceN }

// Wrote adds a controller write, in words, to the write log.
func (r *Recorder) Wrote(desc string) { r.Writes = append(r.Writes, desc) }

// TraceTail is the end of the trace, which explains a failure.
func (r *Recorder) TraceTail() []verdict.TraceLine {
	if len(r.trace) > verdict.MaxTraceLines {
		return r.trace[len(r.trace)-verdict.MaxTraceLines:]
	}
	return r.trace
}

// TimelineTail is the end of the timeline, which keeps a verdict small.
func (r *Recorder) TimelineTail() []verdict.TimelinePoint {
	if len(r.Timeline) > maxTimelinePoints {
		return r.Timeline[len(r.Timeline)-maxTimelinePoints:]
	}
	return r.Timeline
}

// capWriter keeps the first max bytes written and notes the overflow.
type capWriter struct {
	max       int
	Buf       []byte
	Truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.Buf); room < len(p) {
		if room > 0 {
			w.Buf = append(w.Buf, p[:room]...)
		}
		w.Truncated = true
		return len(p), nil // keep the module running; the flag tells
	}
	w.Buf = append(w.Buf, p...)
	return len(p), nil
}

func (w *capWriter) WriteString(s string) { w.Write([]byte(s)) }
