package judge

import (
	"math/rand/v2"
	"strings"

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
}

// newFaultPlan draws, from rng and in the test's order, the opportunity
// at which each planned class fires for sure.
func newFaultPlan(rng *rand.Rand, planned []verdict.Fault) *faultPlan {
	p := &faultPlan{rng: rng, planned: map[verdict.Fault]bool{}, sure: map[verdict.Fault]int{},
		chance: map[verdict.Fault]int{}, fired: map[verdict.Fault]int{}}
	for _, f := range planned {
		p.planned[f] = true
		p.sure[f] = rng.IntN(faultPolicies[f].sureWithin)
	}
	return p
}

// maybe decides whether fault class f fires at this opportunity.
func (p *faultPlan) maybe(f verdict.Fault) bool {
	if !p.on || !p.planned[f] {
		return false
	}
	pol := faultPolicies[f]
	n := p.chance[f]
	p.chance[f]++
	if p.fired[f] >= pol.max {
		return false
	}
	if !(p.fired[f] == 0 && n == p.sure[f]) && p.rng.Float64() >= pol.p {
		return false
	}
	p.fired[f]++
	return true
}

// note writes down a fault that fired.
func (p *faultPlan) note(words string) { p.log = append(p.log, words) }

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

// joinNames is strings.Join for faults and other named strings.
func joinNames[T ~string](xs []T, sep string) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(string(x))
	}
	return b.String()
}
