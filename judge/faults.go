package judge

// FaultClasses are the fault kinds a test may ask for.
var FaultClasses = []string{"restart", "crash-after-write", "duplicate", "coalesce", "missed-event", "pod-failure", "manual-delete", "stale-read", "conflict"}
