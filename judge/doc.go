// Package judge runs a learner's controller against a simulated cluster and
// decides whether it is correct.
//
// The simulation is single-threaded and deterministic: one seed drives
// every choice. It has an API server store (uids, resourceVersions,
// generations, conflicts, owner references and garbage collection,
// finalizers), an informer cache, a workqueue, kubelet-like stages and a
// virtual clock. Faults (restarts, crashes after a write, duplicated,
// coalesced and missed events, Pod failures) are injected in a faulty phase;
// a quiet phase follows, after which oracles decide: did the world converge,
// was the controller idempotent, did it stay within its safety bounds?
//
// Each part of the simulation is a small type in its own file (clock,
// informer, kubelet, faultPlan, host, recorder, beside apiServer and
// workqueue; controller.go starts the learner's process); sim owns one of
// each and makes them take turns, and run.go runs the phases and the
// oracles. RATIONALE.md has the map.
//
// The learner's code runs in the sandbox package; this package knows the
// Kubernetes side and nothing of HTTP. Its answer is a verdict.Verdict:
// package judge/verdict holds that contract and the words for every name in
// it, so that the records, reports, pages and the command line read
// verdicts without depending on this engine.
package judge
