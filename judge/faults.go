package judge

import (
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
