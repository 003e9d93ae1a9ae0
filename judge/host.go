package judge

import (
	"errors"
	"strconv"
	"strings"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// host is the judge's side of the ABI (sandbox.Host): it answers every
// call the learner's module makes, serves reads from the informer, hands
// writes to the simulation, and keeps the accounts that bound a
// controller: calls per reconcile and bytes per test.
type host struct {
	s          *sim
	reconciles int // Reconcile calls so far in this test

	// The current reconcile.
	n      int    // its number
	key    string // the key it reconciles
	calls  int
	writes int      // writes sent, refused ones included
	stored []string // the writes the API server stored, in words, for the writes-per-call rule
	failed int      // calls that got an error back: what entitles Reconcile to return one
	// conflicted names the objects whose last write in this call failed
	// with a Conflict, for the rule that a lost write is not success.
	conflicted []string
	raced      bool // the conflict fault's other writer acted in this call
	racing     bool // ... and in the write under way
	// unanswered names the API calls of this call that failed with a
	// server error and were not made again with an answer, for the rule
	// that a failure is passed on.
	unanswered  []string
	serverErred bool       // a server error failed one of this call's API calls
	crashOpp    int        // the crash-after-write opportunity of the last stored write, or -1
	last        lastWrite  // the last write the API server stored
	result      *ctrl.Call // what Reconcile returned, once it reports it

	traffic int // bytes of calls and replies, against maxTrafficBytes
}

// begin starts the accounts of a new reconcile of key.
func (h *host) begin(key string) {
	h.reconciles++
	h.n, h.key, h.calls, h.writes, h.stored, h.failed, h.conflicted, h.raced, h.crashOpp, h.result = h.reconciles, key, 0, 0, nil, 0, nil, false, -1, nil
	h.unanswered, h.serverErred = nil, false
}

// HandleCall implements sandbox.Host.
func (h *host) HandleCall(op uint32, msg []byte) ([]byte, error) {
	s := h.s
	if s.fail != nil {
		return nil, errStop
	}
	if s.ctx.Err() != nil {
		return nil, s.ctx.Err()
	}
	h.calls++
	if h.calls > maxCallsPerReconcile {
		s.failf(verdict.OracleBudget, "Reconcile #"+strconv.Itoa(h.n)+" made more than "+strconv.Itoa(maxCallsPerReconcile)+" calls to the cluster in one pass.")
		return nil, errStop
	}
	if h.charge(len(msg)) {
		return nil, errStop
	}
	if op == 0 || op >= uint32(ctrl.OpLimit) {
		return nil, errors.New("unknown operation " + strconv.Itoa(int(op)))
	}
	c, err := ctrl.DecodeCall(ctrl.Op(op), msg)
	if err != nil {
		return nil, err
	}
	var r ctrl.Reply
	if call := s.client.verb(c.Op); call != nil {
		var stop error
		if r, stop = call(&c); stop != nil {
			return nil, stop
		}
		return h.reply(c.Op, &r)
	}
	switch c.Op {
	case ctrl.OpRequest:
		ns, name, _ := strings.Cut(h.key, "/")
		r.Request = ctrl.Request{NamespacedName: ctrl.NamespacedName{Namespace: ns, Name: name}}
	case ctrl.OpNow:
		r.Now = s.clock.Time()
	case ctrl.OpLog:
		s.rec.Out.WriteString(c.Text)
		s.rec.Out.WriteString("\n")
	case ctrl.OpResult:
		h.result = &c
	case ctrl.OpTooLarge:
		r = h.tooLarge(c)
	}
	return h.reply(c.Op, &r)
}

// callKind is the kind of an API call, by verb and object kind ("get
// Deployment", "list Pod", "update ConfigMap"), for the server-error
// fault's reruns, which aim at each kind.
func callKind(c *ctrl.Call) string {
	switch c.Op {
	case ctrl.OpGet:
		return "get " + string(c.Kind)
	case ctrl.OpList:
		return "list " + string(c.Kind)
	case ctrl.OpDelete:
		return "delete " + string(c.Kind)
	}
	return verbs[c.Op] + " " + string(c.Object.GetObjectKind())
}

// apiCallName names a call that goes to the API server, as a learner's
// code makes it: "Get of Deployment web", "List of Pods", "create of Pod
// web-…". It reports false for the calls that do not (Log, Now, ...).
func apiCallName(c *ctrl.Call) (string, bool) {
	switch c.Op {
	case ctrl.OpGet:
		return "Get of " + string(c.Kind) + " " + text.Shown(c.Key.Name), true
	case ctrl.OpList:
		return "List of " + string(c.Kind) + "s", true
	case ctrl.OpDelete:
		return "delete of " + string(c.Kind) + " " + text.Shown(c.Key.Name), true
	case ctrl.OpCreate, ctrl.OpUpdate, ctrl.OpUpdateStatus:
		m := c.Object.GetObjectMeta()
		name := m.Name
		if name == "" {
			name = m.GenerateName + "…"
		}
		return verbs[c.Op] + " of " + string(c.Object.GetObjectKind()) + " " + text.Shown(name), true
	}
	return "", false
}
