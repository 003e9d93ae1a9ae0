package judge

import (
	"slices"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The controller's API calls reach the cluster through a client: one
// function per verb, reads from the informer's cache and writes to the
// API server. Faults and the per-write oracles wrap it the way
// controller-runtime's interceptor.Funcs wraps a client, each a small
// function for the verbs it touches, composed in newClient; the write
// itself knows none of them.

// callFunc makes one API call. Its error stops the learner's module (a
// crash, a failed oracle); an API error is the reply's.
type callFunc func(c *ctrl.Call) (ctrl.Reply, error)

// client is the API as the controller's calls reach it.
type client struct {
	Get, List, Create, Update, UpdateStatus, Delete callFunc
}

// interceptor replaces the verbs it sets with functions that get the
// wrapped verb to call on; an unset verb passes through.
type interceptor struct {
	Get, List, Create, Update, UpdateStatus, Delete func(next callFunc, c *ctrl.Call) (ctrl.Reply, error)
}

// with wraps c in i.
func (c client) with(i interceptor) client {
	wrap := func(next callFunc, f func(callFunc, *ctrl.Call) (ctrl.Reply, error)) callFunc {
		if f == nil {
			return next
		}
		return func(call *ctrl.Call) (ctrl.Reply, error) { return f(next, call) }
	}
	return client{
		Get: wrap(c.Get, i.Get), List: wrap(c.List, i.List),
		Create: wrap(c.Create, i.Create), Update: wrap(c.Update, i.Update),
		UpdateStatus: wrap(c.UpdateStatus, i.UpdateStatus), Delete: wrap(c.Delete, i.Delete),
	}
}

// writes is an interceptor that does the same for every write verb.
func writes(f func(next callFunc, c *ctrl.Call) (ctrl.Reply, error)) interceptor {
	return interceptor{Create: f, Update: f, UpdateStatus: f, Delete: f}
}

// verb is the client's function for an API call, or nil for the calls
// that do not reach the API (Log, Now, ...).
func (c client) verb(op ctrl.Op) callFunc {
	switch op {
	case ctrl.OpGet:
		return c.Get
	case ctrl.OpList:
		return c.List
	case ctrl.OpCreate:
		return c.Create
	case ctrl.OpUpdate:
		return c.Update
	case ctrl.OpUpdateStatus:
		return c.UpdateStatus
	case ctrl.OpDelete:
		return c.Delete
	}
	return nil
}

// layers wrap the cluster's client, innermost first: a layer with a
// fault class is there only in the tests that plan it. The order is the
// order in which they act on a write: a server error answers before
// anything happens; a test's edit waiting for the write lands; the
// conflict fault's other writer acts; the write is stored; the oracles
// check it; then the crash fault may strike.
var layers = []struct {
	fault verdict.Fault
	wrap  func(*sim) interceptor
}{
	{"", (*sim).writeOracles},
	{verdict.FaultCrashAfter, crashAfterWrite},
	{verdict.FaultConflict, conflicts},
	{"", (*sim).meanwhileEdits},
	{verdict.FaultServerError, serverErrors},
}

// newClient is the controller's client for one test.
func (s *sim) newClient() client {
	c := client{
		Get:    func(call *ctrl.Call) (ctrl.Reply, error) { return s.inf.Get(*call), nil },
		List:   func(call *ctrl.Call) (ctrl.Reply, error) { return s.inf.List(*call), nil },
		Create: s.write, Update: s.write, UpdateStatus: s.write, Delete: s.write,
	}
	for _, l := range layers {
		if l.fault == "" || s.faults.planned[l.fault] {
			c = c.with(l.wrap(s))
		}
	}
	return c
}

var verbs = map[ctrl.Op]string{ctrl.OpCreate: "create", ctrl.OpUpdate: "update", ctrl.OpUpdateStatus: "update-status", ctrl.OpDelete: "delete"}

// lastWrite is a write the API server stored, for the interceptors
// that act after it.
type lastWrite struct {
	op            ctrl.Op
	verb, name    string // name as shown
	kind          ctrl.Kind
	before, after ctrl.Object // after: for a delete, the object deleted
}

// write applies one controller write to the API server and writes it
// down.
func (s *sim) write(c *ctrl.Call) (ctrl.Reply, error) {
	h := s.host
	verb := verbs[c.Op]
	kind := c.Kind
	if c.Object != nil {
		kind = c.Object.GetObjectKind()
	}
	h.writes++
	var before, after ctrl.Object
	var err *ctrl.StatusError
	s.withActor("controller", func() {
		switch c.Op {
		case ctrl.OpCreate:
			after, err = s.api.Create(c.Object, false)
		case ctrl.OpUpdate, ctrl.OpUpdateStatus:
			m := c.Object.GetObjectMeta()
			before = s.api.Get(kind, cluster.OrDefault(m.Namespace), m.Name)
			after, err = s.api.Update(c.Object, c.Op == ctrl.OpUpdateStatus)
		case ctrl.OpDelete:
			before, err = s.api.Delete(c.Kind, c.Key.Namespace, c.Key.Name)
			after = before
		}
	})
	desc := verb + " " + string(kind)
	name := c.Key.Name
	if after != nil {
		name = after.GetObjectMeta().Name
		if d := text.Clip(s.model.Detail(after), text.MaxDetail); d != "" {
			desc += " " + d
		}
	} else if c.Object != nil {
		name = c.Object.GetObjectMeta().Name
		if name == "" {
			name = c.Object.GetObjectMeta().GenerateName + "…"
		}
	}
	name = text.Shown(name)
	objName := string(kind) + " " + name
	if s.suite.Rules.RetryConflicts {
		h.conflicted = slices.DeleteFunc(h.conflicted, func(o string) bool { return o == objName })
	}
	if err != nil && err.Reason == ctrl.ReasonConflict && !slices.Contains(h.conflicted, objName) {
		h.conflicted = append(h.conflicted, objName)
	}
	if err != nil {
		if !(h.racing && err.Reason == ctrl.ReasonConflict) {
			// The conflict fault's refusals are the fault's, not the
			// controller's: a test's expected writes do not list them.
			s.rec.Wrote(desc + " (failed: " + err.Reason + ")")
		}
		s.rec.Logf("controller", verb, " ", string(kind), " ", name, " → ", err.Reason, ": ", err.Message)
		return ctrl.Reply{Err: err}, nil
	}
	s.rec.Wrote(desc)
	s.rec.Logf("controller", verb, " ", string(kind), " ", name, detailSuffix(text.Clip(s.model.Detail(after), text.MaxDetail)))
	s.rec.Note(verdict.MarkWrite)
	h.stored = append(h.stored, verb+" "+string(kind)+" "+name)
	h.last = lastWrite{op: c.Op, verb: verb, name: name, kind: kind, before: before, after: after}
	if c.Op == ctrl.OpDelete {
		return ctrl.Reply{}, nil
	}
	return ctrl.Reply{Object: after}, nil
}

// stored says whether a write call stored its object.
func stored(r ctrl.Reply, err error) bool { return err == nil && r.Err == nil }
