package judge

import (
	"encoding/json"
	"strconv"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The host's and the engine's side of the bounds in internal/text: a request the
// module could not send, and the verdict's budget.

// tooLarge refuses a request the module did not send because it was over
// ctrl.MaxRequestBytes, as the real API server refuses a body over 3 MiB;
// a refused write is logged like any other failed write.
func (h *host) tooLarge(c ctrl.Call) ctrl.Reply {
	verb, write := verbs[c.Of]
	if !write {
		verb = "request"
	}
	what := text.Shown(string(c.Kind))
	if c.Key.Name != "" {
		what = cluster.ObjRef(c.Kind, c.Key.Name)
	}
	// Under the request limit, a write is refused for the object's size,
	// as etcd refuses it; over it, for the request's, as the API server
	// refuses it before reading it.
	err := cluster.TooBig(c.Kind, c.Key.Name, c.Size)
	if !write || c.Size > ctrl.MaxRequestBytes {
		err = cluster.APIErr(413, ctrl.ReasonRequestEntityTooLarge, "Request entity too large: limit is "+strconv.Itoa(ctrl.MaxRequestBytes)+
			" (the "+verb+" of "+what+" was "+cluster.MiB(c.Size)+")")
	}
	if h.charge(c.Size) {
		return ctrl.Reply{} // the test has failed; the reply is never sent
	}
	if write {
		h.writes++
		h.s.rec.Wrote(verb + " " + text.Shown(string(c.Kind)) + " (failed: " + err.Reason + ")")
	}
	h.s.rec.Logf("controller", verb, " ", what, " → ", err.Reason, ": ", err.Message)
	return ctrl.Reply{Err: err}
}

// verdictReserve is kept from the verdict budget for everything but the
// tests: status, names, versions, counts.
const verdictReserve = 4 << 10

// cutTestBytes is what a test cut to its minimum (name, status, a
// shortened message, the note that says so) may take. Room for that much
// is kept for every test still to come, so that however many tests a
// suite has, the last ones still fit once cut.
const cutTestBytes = 2 << 10

// keepWithin charges a test's result to the verdict budget (used so far,
// in bytes of JSON) and returns the new total. A test that does not fit
// loses its trace, timeline and output, then most of its message, and
// says so in Cut. Tests are charged in order, so the first failures keep
// everything and the later ones are cut first.
// left is the number of tests still to be charged after this one.
func keepWithin(r *verdict.TestResult, used, left int) int {
	size := func() int { b, _ := json.Marshal(r); return len(b) + 1 }
	budget := text.MaxVerdictBytes - verdictReserve - left*cutTestBytes
	n := size()
	if used+n <= budget {
		return used + n
	}
	if len(r.Trace) > 0 || len(r.Timeline) > 0 || r.Output != "" {
		r.Trace, r.Timeline = nil, nil
		if r.Output != "" {
			r.Output, r.OutputTruncated = "", true
		}
		r.Cut = "This test's trace, timeline and output are left out: the verdict reached its " +
			strconv.Itoa(text.MaxVerdictBytes>>10) + " KiB limit. Replay it alone to see them."
		n = size()
	}
	if used+n > budget {
		r.Message = text.Clip(r.Message, 512)
		r.Faults = nil
		r.Scenario = "" // it replays by name, seed and --test
		r.Cut = "This test's trace, timeline, output and faults (and scenario, if any) are left out and its message is shortened: the verdict reached its " +
			strconv.Itoa(text.MaxVerdictBytes>>10) + " KiB limit. Replay it alone to see them."
		n = size()
	}
	return used + n
}

// boundVerdict clips the verdict's own learner text (a compiler's message
// and diagnostics quote the learner's code) and, when keepWithin cut any
// test, marks the verdict truncated and says which tests.
func boundVerdict(v *verdict.Verdict) {
	v.Message = text.Clip(v.Message, text.MaxMessageBytes)
	if len(v.Diagnostics) > 50 {
		v.Diagnostics = v.Diagnostics[:50]
	}
	for i := range v.Diagnostics {
		v.Diagnostics[i].Message = text.Clip(v.Diagnostics[i].Message, text.MaxErrorText)
	}
	var cut []string
	for _, t := range v.Tests {
		if t.Cut != "" {
			cut = append(cut, strconv.Quote(t.Name))
		}
	}
	if len(cut) > 0 {
		v.Truncated = true
		v.Cut = "To keep this verdict under " + strconv.Itoa(text.MaxVerdictBytes>>10) + " KiB, the trace, timeline and output of " +
			text.Plural(len(cut), "test") + " are left out: " + text.JoinList(cut, 2<<10) + "."
	}
}

// charge counts n bytes moved between the controller and the cluster and
// fails the test past text.MaxTrafficBytes. The judge's side of the work
// (decoding calls, encoding replies, copying them into the module) is
// not metered in steps, so this is what bounds it, as
// maxCallsPerReconcile bounds the number of calls.
func (h *host) charge(n int) bool {
	h.traffic += n
	if h.traffic <= text.MaxTrafficBytes {
		return false
	}
	h.s.failf(verdict.OracleBudget, "Your controller's requests to the cluster and their replies came to more than "+
		strconv.Itoa(text.MaxTrafficBytes>>20)+" MiB in this test, in "+text.Plural(h.reconciles, "reconcile")+
		": read and write fewer or smaller objects.")
	return true
}

// reply encodes the reply to a call and charges it. A list too long for
// one message (the cache can briefly hold more than the quota while
// events are held back) is refused rather than sent.
func (h *host) reply(op ctrl.Op, r *ctrl.Reply) ([]byte, error) {
	b := ctrl.AppendReply(nil, op, r)
	failed := r.Err != nil
	if len(b) > text.MaxReplyBytes {
		failed = true
		b = ctrl.AppendReply(nil, op, &ctrl.Reply{Err: cluster.APIErr(500, ctrl.ReasonInternal, "the reply would be "+cluster.MiB(len(b))+
			", more than the "+cluster.MiB(text.MaxReplyBytes)+" the simulated API server sends at once: list fewer objects (a label selector)")})
	}
	if h.charge(len(b)) {
		return nil, errStop
	}
	if failed {
		h.failed++
	}
	return b, nil
}
