// Package cluster is the simulated Kubernetes cluster a learner's
// controller runs against: an API server (uids, resourceVersions,
// generations, the status subresource, conflicts, finalizers, owner
// references and who set which metadata), an informer cache, a workqueue,
// the kubelet's stages, a garbage collector, a virtual clock and a
// recorder of the trace and timeline.
//
// Each part is a small type in its own file, driven from outside: the
// judge package owns one of each per test and makes them take turns. The
// package knows kinds and API semantics and nothing of tests, faults,
// oracles or exercises. Every choice it makes comes from the *rand.Rand
// it is given.
package cluster
