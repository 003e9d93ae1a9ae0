// Package judge runs a learner's controller against a simulated cluster and
// decides whether it is correct.
//
// A submission goes down the files in this order: engine.go builds it
// (compile.go) and plans its tests (the exercise's, and generate.go's
// drawn scenarios); run.go runs each test, in order and within one budget
// of steps, and shrink.go makes the first failure smaller. A test is a sim
// (sim.go): one of each part of the simulated cluster (package cluster),
// the fault plan (faults.go) and the learner's controller process
// (controller.go, host.go), taking turns through the phases in phases.go
// and the workload in steps.go. The controller's API calls go through a
// client (client.go) that faults and the per-write oracles (oracles.go)
// wrap as interceptors; differential.go compares the run with the
// reference solution's, and bounds.go keeps the verdict within its size.
//
// Everything a test does is a function of its seed: the same code and seed
// give the same verdict on any machine. The exercises come from package
// exercise, each family's model and generator from its folder under
// package family (listed in models.go); checks.go is what the engine adds
// to the checking of a tests.yaml, check.go and mutate.go are the author's
// tools. RATIONALE.md says why the design is what it is.
//
// The learner's code runs in the sandbox package; this package knows the
// Kubernetes side and nothing of HTTP. Its answer is a verdict.Verdict:
// package judge/verdict holds that contract and the words for every name in
// it, so that the records, reports, pages and the command line read
// verdicts without depending on this engine.
package judge
