package judge

import (
	"errors"
	"strconv"
	"strings"

	"ctrljudge/judge/ctrl"
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
	raced      bool       // the conflict fault's other writer acted in this call
	crashOpp   int        // the crash-after-write opportunity of the last stored write, or -1
	result     *ctrl.Call // what Reconcile returned, once it reports it

	traffic int // bytes of calls and replies, against maxTrafficBytes
}

// begin starts the accounts of a new reconcile of key.
func (h *host) begin(key string) {
	h.reconciles++
	h.n, h.key, h.calls, h.writes, h.stored, h.failed, h.conflicted, h.raced, h.crashOpp, h.result = h.reconciles, key, 0, 0, nil, 0, nil, false, -1, nil
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
	switch c.Op {
	case ctrl.OpRequest:
		ns, name, _ := strings.Cut(h.key, "/")
		r.Request = ctrl.Request{NamespacedName: ctrl.NamespacedName{Namespace: ns, Name: name}}
	case ctrl.OpNow:
		r.Now = s.clock.time()
	case ctrl.OpLog:
		s.rec.out.WriteString(c.Text)
		s.rec.out.WriteString("\n")
	case ctrl.OpResult:
		h.result = &c
	case ctrl.OpTooLarge:
		r = h.tooLarge(c)
	case ctrl.OpGet:
		r = s.inf.get(c)
	case ctrl.OpList:
		r = s.inf.list(c)
	case ctrl.OpCreate, ctrl.OpUpdate, ctrl.OpUpdateStatus, ctrl.OpDelete:
		var stop error
		r, stop = s.write(c)
		if stop != nil {
			return nil, stop
		}
	}
	return h.reply(c.Op, &r)
}
