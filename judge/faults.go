package judge

// Fault classes a test may list. Each fires with a seeded probability
// during the faulty phase, a bounded number of times per test, and is
// written down in plain words when it does.
const (
	faultRestart      = "restart"           // controller restarted between reconciles
	faultCrashAfter   = "crash-after-write" // controller killed right after a write, then restarted
	faultDuplicate    = "duplicate"         // a key reconciled again with nothing changed
	faultCoalesce     = "coalesce"          // consecutive workload steps delivered as one
	faultMissedEvent  = "missed-event"      // a watch event never reaches the queue
	faultPodFailure   = "pod-failure"       // a Pod turns Failed
	faultManualDelete = "manual-delete"     // a user deletes a Pod
	faultStaleRead    = "stale-read"        // the cache lags the controller's own writes by a reconcile
	faultConflict     = "conflict"          // an update fails with 409 Conflict
)

// FaultClasses are the fault kinds a test may ask for.
var FaultClasses = []string{faultRestart, faultCrashAfter, faultDuplicate, faultCoalesce,
	faultMissedEvent, faultPodFailure, faultManualDelete, faultStaleRead, faultConflict}

type faultPolicy struct {
	p          float64 // chance at each opportunity
	max        int     // times per test at most
	sureWithin int     // fires for sure at one of its first sureWithin opportunities
}

var faultPolicies = map[string]faultPolicy{
	faultRestart:      {0.25, 4, 3},
	faultCrashAfter:   {0.3, 4, 3},
	faultDuplicate:    {0.4, 6, 3},
	faultCoalesce:     {0.5, 2, 1},
	faultMissedEvent:  {0.3, 3, 3},
	faultPodFailure:   {0.15, 2, 2},
	faultManualDelete: {0.15, 2, 2},
	faultStaleRead:    {0.3, 3, 2},
	faultConflict:     {0.3, 4, 2},
}

// FaultHint is a sentence on what a fault class tests, for learners.
var FaultHint = map[string]string{
	faultRestart:      "A restart loses everything the controller kept in memory; Reconcile must work from what it reads.",
	faultCrashAfter:   "A crash right after a write leaves the job half done; the next Reconcile must pick up from the cluster as it is.",
	faultDuplicate:    "The same request may arrive again with nothing changed; a second call must make no extra writes.",
	faultCoalesce:     "Several changes may arrive as one; Reconcile must act on the latest state, not on each change.",
	faultMissedEvent:  "An event may never arrive; the periodic resync calls Reconcile anyway, and it must still do the right thing.",
	faultPodFailure:   "A Pod can fail on its own; the controller must replace it.",
	faultManualDelete: "Someone can delete a Pod by hand; the controller must notice and heal.",
	faultStaleRead:    "The cache may not show the controller's own last write yet.",
	faultConflict:     "An update can lose a race and fail with a Conflict; read again and retry, or return the error.",
}
