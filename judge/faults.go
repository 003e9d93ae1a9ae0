package judge

import (
	"math/rand/v2"

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
	rng     *rand.Rand
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

// newFaultPlan draws, from rng and in the test's order, the opportunity
// at which each planned class fires for sure.
func newFaultPlan(rng *rand.Rand, planned []verdict.Fault) *faultPlan {
	p := &faultPlan{rng: rng, planned: map[verdict.Fault]bool{}, sure: map[verdict.Fault]int{},
		chance: map[verdict.Fault]int{}, fired: map[verdict.Fault]int{}, force: map[verdict.Fault]int{},
		serverCalls: map[string]int{}, serverHit: map[string]bool{}, serverAt: map[string]int{}}
	for _, f := range planned {
		p.planned[f] = true
		p.sure[f] = rng.IntN(faultPolicies[f].sureWithin)
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
	sure     map[verdict.Fault]int // each class's sure point
	force    map[verdict.Fault]int // an opportunity each class fires at regardless
	triedMid bool                  // a crash between two writes of a call was forced
	// serverAt forces a server error at one opportunity of each kind of
	// API call the first run's server errors missed.
	serverAt    map[string]int
	triedServer bool
}

func newFaultPins() *faultPins {
	return &faultPins{sure: map[verdict.Fault]int{}, force: map[verdict.Fault]int{}, serverAt: map[string]int{}}
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
	if !(p.fired[f] == 0 && n == p.sure[f]) && p.rng.Float64() >= pol.p {
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

// note writes down a fault that fired.
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
// whether there is a next run. First, each planned class that had
// opportunities but never fired (its sure point lay beyond the last) is
// pinned to one of them. Then, once, a crash after a write is forced at
// one of the points where it would have cut a call between two writes, if
// no crash did: the intermediate state such a crash leaves is what
// crash-after-write is for. Last, once, a server error is forced at one
// opportunity of each kind of API call (get Deployment, list Pod, ...) that no
// server error hit, since a controller may pass on the failure of one
// call and swallow another's. The fault plan draws everything it drew
// before, so the next run is the same run up to the first pinned or forced
// opportunity, where that class fires.
func repin(s *sim, pins *faultPins, seed uint64, round int) bool {
	rng := rand.New(rand.NewPCG(seed, uint64(round)+1))
	if missed := s.faults.missed(); len(missed) > 0 {
		for _, f := range missed {
			pins.sure[f] = rng.IntN(s.faults.chance[f])
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
