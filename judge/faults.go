package judge

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The fault classes a test may list are verdict.Faults, worded there. Each
// fires with a seeded probability during the faulty phase, a bounded
// number of times per test, and is written down in plain words when it
// does.

type faultPolicy struct {
	p          float64 // chance at each opportunity
	max        int     // times per test at most
	sureWithin int     // fires for sure at one of its first sureWithin opportunities
}

var faultPolicies = map[verdict.Fault]faultPolicy{
	verdict.FaultRestart:      {0.25, 4, 3},
	verdict.FaultCrashAfter:   {0.3, 4, 3},
	verdict.FaultDuplicate:    {0.4, 6, 3},
	verdict.FaultCoalesce:     {0.5, 2, 1},
	verdict.FaultMissedEvent:  {0.3, 3, 3},
	verdict.FaultPodFailure:   {0.15, 2, 2},
	verdict.FaultManualDelete: {0.15, 2, 2},
	verdict.FaultStaleRead:    {0.3, 3, 2},
	verdict.FaultConflict:     {0.3, 4, 2},
	verdict.FaultServerError:  {0.1, 3, 4},
}

// faultPlan decides when a test's planned faults fire and writes down
// those that did. Each planned class fires for sure at one of its first
// few opportunities (drawn from the seed), so a test that plans it really
// exercises it, and at random after that, up to its cap. Nothing fires
// outside the faulty phase.
type faultPlan struct {
	seed    uint64
	planned map[verdict.Fault]bool
	sure    map[verdict.Fault]int // the opportunity at which each fires for sure
	chance  map[verdict.Fault]int // opportunities each has had
	fired   map[verdict.Fault]int // how often each fired
	on      bool                  // the faulty phase
	log     []string              // what fired, in plain words, in order
	force   map[verdict.Fault]int // an opportunity at which a class fires whatever else holds
	// midCall lists the crash-after-write opportunities that did not
	// fire and were followed by another stored write in the same call:
	// where a crash would have cut a call in two.
	midCall []int
	// serverCalls counts the server-error opportunities of each kind of
	// API call ("get Deployment", "list Pod", ...), and serverHit the
	// kinds a server error did hit, so that a rerun can aim one at each
	// kind missed.
	serverCalls map[string]int
	serverHit   map[string]bool
	serverAt    map[string]int // a kind's opportunity at which a server error is forced
}

// newFaultPlan draws, from the seed, the opportunity at which each planned
// class fires for sure. Every decision of the plan is a draw of its own,
// keyed by the class and the opportunity's number (mix): whether the nth
// restart opportunity fires does not depend on how many draws another
// class made before it, nor on the order of the calls that made them.
func newFaultPlan(seed uint64, planned []verdict.Fault) *faultPlan {
	p := &faultPlan{seed: seed, planned: map[verdict.Fault]bool{}, sure: map[verdict.Fault]int{},
		chance: map[verdict.Fault]int{}, fired: map[verdict.Fault]int{}, force: map[verdict.Fault]int{},
		serverCalls: map[string]int{}, serverHit: map[string]bool{}, serverAt: map[string]int{}}
	for _, f := range planned {
		p.planned[f] = true
		p.sure[f] = int(mix(seed, "sure/"+string(f), 0) % uint64(faultPolicies[f].sureWithin))
	}
	return p
}

// pin makes each class in pins fire for sure at the given opportunity
// instead of the one drawn. The draws are made all the same, so a run
// with pins is the run without them up to the first pinned opportunity.
func (p *faultPlan) pin(pins *faultPins) {
	if pins == nil {
		return
	}
	for f, n := range pins.sure {
		if p.planned[f] {
			p.sure[f] = n
		}
	}
	for f, n := range pins.force {
		if p.planned[f] {
			p.force[f] = n
		}
	}
	for call, n := range pins.serverAt {
		p.serverAt[call] = n
	}
}

// faultPins are what the reruns of a test fix in its fault plan.
type faultPins struct {
	sure map[verdict.Fault]int // each class's sure point
	// tried lists, for each class, the sure points its runs have had.
	tried    map[verdict.Fault]map[int]bool
	force    map[verdict.Fault]int // an opportunity each class fires at regardless
	triedMid bool                  // a crash between two writes of a call was forced
	// serverAt forces a server error at one opportunity of each kind of
	// API call the first run's server errors missed.
	serverAt    map[string]int
	triedServer bool
}

func newFaultPins() *faultPins {
	return &faultPins{sure: map[verdict.Fault]int{}, tried: map[verdict.Fault]map[int]bool{}, force: map[verdict.Fault]int{}, serverAt: map[string]int{}}
}

// missed lists, in verdict.Faults order, the planned classes that had an
// opportunity but never fired: their sure point lay beyond the last one.
func (p *faultPlan) missed() []verdict.Fault {
	var out []verdict.Fault
	for _, f := range verdict.Faults {
		if p.planned[f] && p.fired[f] == 0 && p.chance[f] > 0 {
			out = append(out, f)
		}
	}
	return out
}

// untried records the sure point each planned class had in this run, and
// gives, for each class, the first place a seed could have put its sure
// point (one of the class's first sureWithin opportunities, and one it
// had) that no run has tried yet.
func (p *faultPlan) untried(pins *faultPins) map[verdict.Fault]int {
	out := map[verdict.Fault]int{}
	for _, f := range verdict.Faults {
		if !p.planned[f] {
			continue
		}
		if pins.tried[f] == nil {
			pins.tried[f] = map[int]bool{}
		}
		pins.tried[f][p.sure[f]] = true
		if p.chance[f] > faultPolicies[f].sureWithin {
			continue // many: the drawn sure point stands
		}
		for k := range p.chance[f] {
			if !pins.tried[f][k] {
				out[f] = k
				break
			}
		}
	}
	return out
}

// maybe decides whether fault class f fires at this opportunity.
func (p *faultPlan) maybe(f verdict.Fault) bool {
	if !p.on || !p.planned[f] {
		return false
	}
	pol := faultPolicies[f]
	n := p.chance[f]
	p.chance[f]++
	if k, ok := p.force[f]; ok && k == n {
		p.fired[f]++
		return true
	}
	if p.fired[f] >= pol.max {
		return false
	}
	if !(p.fired[f] == 0 && n == p.sure[f]) && unit(mix(p.seed, "fires/"+string(f), uint64(n))) >= pol.p {
		return false
	}
	p.fired[f]++
	return true
}

// maybeServerError decides whether the server-error fault fails this API
// call, of the kind call ("get Deployment", "list Pod", ...). At most one call
// of a Reconcile fails (busy says one did), so that a second failure
// cannot hide what the controller did with the first. A kind's forced
// opportunity fires at the first of its calls from there on that no other
// failure in the same Reconcile hides.
func (p *faultPlan) maybeServerError(call string, busy bool) bool {
	if !p.on || !p.planned[verdict.FaultServerError] {
		return false
	}
	n := p.serverCalls[call]
	p.serverCalls[call]++
	if busy {
		return false
	}
	fire := p.maybe(verdict.FaultServerError)
	if k, ok := p.serverAt[call]; ok && n >= k && !p.serverHit[call] && !fire {
		p.fired[verdict.FaultServerError]++
		fire = true
	}
	if fire {
		p.serverHit[call] = true
	}
	return fire
}

// Note writes down a fault that fired.
func (p *faultPlan) Note(words string) { p.log = append(p.log, words) }

// classes are the classes that fired, in verdict.Faults order.
func (p *faultPlan) classes() []verdict.Fault {
	var out []verdict.Fault
	for _, c := range verdict.Faults {
		if p.fired[c] > 0 {
			out = append(out, c)
		}
	}
	return out
}

// repin decides what the next run of a test that passed fixes in its
// fault plan, drawing from the test's seed and the round, and reports
// whether there is a next run. First, the sure point of each planned
// class goes, run by run, to every place a seed could put it: each of the
// class's first sureWithin opportunities that the test gave it. A bug one
// of those places reveals is then caught at every seed, and a class whose
// drawn sure point lay beyond its last opportunity fires all the same.
// Then, once, a crash after a write is forced at one of the points where
// it would have cut a call between two writes, if no crash did: the
// intermediate state such a crash leaves is what crash-after-write is
// for. Last, once, a server error is forced at one opportunity of each
// kind of API call (get Deployment, list Pod, ...) that no server error
// hit, since a controller may pass on the failure of one call and
// swallow another's. The fault plan draws everything it drew before, so
// the next run is the same run up to the first pinned or forced
// opportunity, where that class fires.
func repin(s *sim, pins *faultPins, seed uint64, round int) bool {
	rng := rand.New(rand.NewPCG(seed, uint64(round)+1))
	if next := s.faults.untried(pins); len(next) > 0 {
		for f, k := range next {
			pins.sure[f] = k
		}
		return true
	}
	if mid := s.faults.midCall; !pins.triedMid && len(mid) > 0 {
		pins.triedMid = true
		pins.force[verdict.FaultCrashAfter] = mid[rng.IntN(len(mid))]
		return true
	}
	if p := s.faults; p.planned[verdict.FaultServerError] && !pins.triedServer {
		pins.triedServer = true
		for _, call := range text.SortedKeys(p.serverCalls) {
			if n := p.serverCalls[call]; !p.serverHit[call] {
				pins.serverAt[call] = rng.IntN(n)
			}
		}
		return len(pins.serverAt) > 0
	}
	return false
}

// crashAfterWrite is the crash-after-write fault: the controller's
// process dies right after the API server stored one of its writes, and
// the call never returns.
func crashAfterWrite(s *sim) interceptor {
	return writes(func(next callFunc, c *ctrl.Call) (ctrl.Reply, error) {
		r, err := next(c)
		if !stored(r, err) {
			return r, err
		}
		h, w := s.host, s.host.last
		if h.crashOpp >= 0 {
			// A crash after the previous write would have cut this call in two.
			s.faults.midCall = append(s.faults.midCall, h.crashOpp)
			h.crashOpp = -1
		}
		if s.faults.on {
			h.crashOpp = s.faults.chance[verdict.FaultCrashAfter]
		}
		if s.faults.maybe(verdict.FaultCrashAfter) {
			s.noteFault(verdict.FaultCrashAfter, "Crashed your controller right after its "+text.Ordinal(h.writes)+" write in reconcile #"+
				strconv.Itoa(h.n)+" ("+w.verb+" "+string(w.kind)+" "+w.name+"), then restarted it.")
			return ctrl.Reply{}, errCrash
		}
		return r, err
	})
}

// conflicts is the conflict fault, on updates: another writer changes the
// object first (raceAhead). It acts at most once per call, so a retry
// within the call meets the state it left.
func conflicts(s *sim) interceptor {
	update := func(next callFunc, c *ctrl.Call) (ctrl.Reply, error) {
		h := s.host
		m := c.Object.GetObjectMeta()
		if cur := s.api.Get(c.Object.GetObjectKind(), cluster.OrDefault(m.Namespace), m.Name); cur != nil && !h.raced && s.faults.maybe(verdict.FaultConflict) {
			s.raceAhead(cur, verbs[c.Op])
			h.raced, h.racing = true, true
			defer func() { h.racing = false }()
		}
		return next(c)
	}
	return interceptor{Update: update, UpdateStatus: update}
}

// serverErrors is the server-error fault, on every API call: the API
// server fails it for a moment, having read or written nothing. A call
// that is answered again later clears its name from those the rule on
// passing errors on waits for.
func serverErrors(s *sim) interceptor {
	f := func(next callFunc, c *ctrl.Call) (ctrl.Reply, error) {
		name, _ := apiCallName(c)
		if e := s.serverError(c, name); e != nil {
			return ctrl.Reply{Err: e}, nil
		}
		s.host.unanswered = slices.DeleteFunc(s.host.unanswered, func(n string) bool { return n == name })
		return next(c)
	}
	return interceptor{Get: f, List: f, Create: f, Update: f, UpdateStatus: f, Delete: f}
}

// serverError is the server-error fault: the API server fails the call
// named name, of kind op, for a moment, having read or written nothing.
// It returns nil when the fault does not fire.
func (s *sim) serverError(c *ctrl.Call, name string) *ctrl.StatusError {
	h := s.host
	if !s.faults.maybeServerError(callKind(c), h.serverErred) {
		return nil
	}
	h.serverErred = true
	if !slices.Contains(h.unanswered, name) {
		h.unanswered = append(h.unanswered, name)
	}
	// The two answers alternate, so that a controller that tells one
	// transient error from another meets both.
	e := cluster.APIErr(503, ctrl.ReasonServiceUnavailable, "the server is currently unable to handle the request")
	if s.faults.fired[verdict.FaultServerError]%2 == 0 {
		e = cluster.APIErr(500, ctrl.ReasonInternal, "an error on the server has prevented the request from succeeding")
	}
	s.noteFault(verdict.FaultServerError, "The API server failed your "+name+" in reconcile #"+strconv.Itoa(h.n)+
		" with "+strconv.Itoa(int(e.Code))+" "+e.Reason+": nothing was read or written, and the same call a moment later would work.")
	s.rec.Logf("controller", name, " → ", e.Reason, ": ", e.Message)
	return e
}

// The conflict fault's other writer marks the objects it changes with a
// label or an annotation of its own.
const (
	otherLabel      = "other-writer.example.com/edit"
	otherAnnotation = "other-writer.example.com/note"
)

// raceAhead is the conflict fault: another writer changes cur, the object
// the controller is about to update, so the update, based on the version
// the controller read, meets the API server's real 409 Conflict. The
// change reaches the controller's cache at once, as a real informer's
// would within milliseconds, so reading again and retrying works; copying
// the new resourceVersion onto the old copy erases the change.
func (s *sim) raceAhead(cur ctrl.Object, verb string) {
	next := ctrl.DeepCopy(cur)
	m := next.GetObjectMeta()
	n := strconv.Itoa(s.faults.fired[verdict.FaultConflict])
	var what string
	edits := 2
	d, isDeployment := next.(*ctrl.Deployment)
	if isDeployment && slices.Contains(s.suite.ConflictEdits, "replicas") {
		edits++
	}
	switch e := int(mix(s.seed, "conflict-edit", uint64(s.faults.fired[verdict.FaultConflict])) % uint64(edits)); {
	case e == 2:
		d.Spec.Replicas++
		what = "scaled it to " + text.Itoa(d.Spec.Replicas) + " replicas (spec.replicas)"
	case e == 0:
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[otherLabel] = "edit-" + n
		what = "set the label " + otherLabel + "=edit-" + n
	default:
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[otherAnnotation] = "edit " + n
		what = "set the annotation " + otherAnnotation + "=\"edit " + n + "\""
	}
	var after ctrl.Object
	var err *ctrl.StatusError
	s.withActor(cluster.OtherWriter, func() { after, err = s.api.Update(next, false) })
	kind, name := string(cur.GetObjectKind()), cur.GetObjectMeta().Name
	if err != nil {
		s.rec.Logf(cluster.OtherWriter, "could not change ", kind, " ", name, ": ", err.Message)
		return
	}
	s.rec.Logf(cluster.OtherWriter, "changed ", kind, " ", name, ": it ", what)
	s.inf.Deliver(s.notify)
	s.noteFault(verdict.FaultConflict, "Another writer changed "+kind+" "+name+" just before your "+verb+" in reconcile #"+strconv.Itoa(s.host.n)+
		": it "+what+" (resourceVersion "+cur.GetObjectMeta().ResourceVersion+" → "+after.GetObjectMeta().ResourceVersion+
		"). Your "+verb+" was based on the version you read, so the API server refuses it with 409 Conflict; writing your old copy "+
		"with the new resourceVersion would erase that change.")
}
