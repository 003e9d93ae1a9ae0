package judge

import (
	"slices"
	"testing"

	"ctrljudge/judge/verdict"
)

func TestFaultPlanFiresOnlyWhatIsPlannedInTheFaultyPhase(t *testing.T) {
	p := newFaultPlan(1, []verdict.Fault{verdict.FaultRestart})
	for i := 0; i < 50; i++ {
		if p.maybe(verdict.FaultRestart) {
			t.Fatal("fired outside the faulty phase")
		}
	}
	p.on = true
	for i := 0; i < 50; i++ {
		if p.maybe(verdict.FaultConflict) {
			t.Fatal("fired a class the test does not plan")
		}
	}
	if p.chance[verdict.FaultRestart] != 0 {
		t.Fatal("an opportunity outside the faulty phase counted")
	}
}

func TestFaultPlanFiresForSureThenUpToItsCap(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		for _, f := range verdict.Faults {
			p := newFaultPlan(seed, []verdict.Fault{f})
			p.on = true
			pol := faultPolicies[f]
			first := -1
			for i := 0; i < 200; i++ {
				if p.maybe(f) && first < 0 {
					first = i
				}
			}
			if first < 0 || first > p.sure[f] || p.sure[f] >= pol.sureWithin {
				t.Fatalf("seed %d, %s: first fired at opportunity %d, sure at %d (within %d)", seed, f, first, p.sure[f], pol.sureWithin)
			}
			if p.fired[f] != pol.max {
				t.Fatalf("seed %d, %s: fired %d times in 200 chances, want the cap %d", seed, f, p.fired[f], pol.max)
			}
		}
	}
}

func TestFaultPlanIsAFunctionOfTheSeed(t *testing.T) {
	draw := func() []bool {
		p := newFaultPlan(7, verdict.Faults)
		p.on = true
		var out []bool
		for i := 0; i < 30; i++ {
			for _, f := range verdict.Faults {
				out = append(out, p.maybe(f))
			}
		}
		return out
	}
	if !slices.Equal(draw(), draw()) {
		t.Fatal("the same seed fired different faults")
	}
}

func TestFaultPlanClassesComeInVerdictOrder(t *testing.T) {
	p := newFaultPlan(1, nil)
	p.fired[verdict.FaultConflict] = 1
	p.fired[verdict.FaultRestart] = 2
	want := []verdict.Fault{}
	for _, f := range verdict.Faults {
		if f == verdict.FaultConflict || f == verdict.FaultRestart {
			want = append(want, f)
		}
	}
	if got := p.classes(); !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	if newFaultPlan(1, nil).classes() != nil {
		t.Fatal("no fault fired: classes must be nil, as the verdict omits them")
	}
}

// A pin moves a class's sure point without changing what is drawn, so a
// pinned plan answers as the unpinned one did up to the pinned point; a
// forced opportunity fires even past the cap.
func TestFaultPlanPinsKeepThePrefix(t *testing.T) {
	f := verdict.FaultConflict
	draw := func(pins *faultPins) []bool {
		p := newFaultPlan(3, []verdict.Fault{f})
		p.pin(pins)
		p.on = true
		var out []bool
		for i := 0; i < 20; i++ {
			out = append(out, p.maybe(f))
		}
		return out
	}
	base := draw(nil)
	first := slices.Index(base, true)
	pins := newFaultPins()
	pins.sure[f] = first + 3
	// Unfired before the new sure point only if the random draws miss,
	// which they did in the base run up to its first firing.
	got := draw(pins)
	if !slices.Equal(got[:first], base[:first]) {
		t.Fatalf("a pin changed the prefix: %v vs %v", got, base)
	}
	pins = newFaultPins()
	pins.force[f] = 19
	got = draw(pins)
	if !slices.Equal(got[:19], base[:19]) || !got[19] {
		t.Fatalf("forced at 19: %v vs %v", got, base)
	}
}

// Where a class has no more opportunities than its sure point's window,
// the reruns put the sure point at each of them in turn, whatever the
// seed drew, and then stop; where it has more, the drawn point stands.
func TestFaultPlanSurePointsVisitEveryFewOpportunity(t *testing.T) {
	crash, restart := verdict.FaultCrashAfter, verdict.FaultRestart
	window := faultPolicies[crash].sureWithin
	for seed := uint64(1); seed <= 20; seed++ {
		pins := newFaultPins()
		var firstFires []int
		for round := 0; ; round++ {
			if round > window {
				t.Fatalf("seed %d: still rerunning after %d rounds", seed, round)
			}
			p := newFaultPlan(seed, []verdict.Fault{crash, restart})
			p.pin(pins)
			p.on = true
			fires := -1
			for i := range window - 1 { // a test with few crash opportunities
				if p.maybe(crash) && fires < 0 {
					fires = i
				}
			}
			for range 10 * window { // and many restart opportunities
				p.maybe(restart)
			}
			firstFires = append(firstFires, fires)
			next := p.untried(pins)
			if _, ok := next[restart]; ok {
				t.Fatalf("seed %d: restart had %d opportunities, more than its window, yet is enumerated", seed, p.chance[restart])
			}
			k, ok := next[crash]
			if !ok {
				break
			}
			pins.sure[crash] = k
		}
		for i := range window - 1 {
			if !pins.tried[crash][i] {
				t.Errorf("seed %d: no run had its crash sure point at opportunity %d (first fires %v)", seed, i, firstFires)
			}
		}
	}
}
