// Package ctrl is the API a learner's controller is written against.
//
// It is shaped like controller-runtime: a Reconcile function receives a
// Request naming one object and talks to the cluster through a Client whose
// Get, List, Create, Update, UpdateStatus and Delete behave like the
// Kubernetes API server's (resourceVersion conflicts, AlreadyExists,
// NotFound, generateName, owner references, finalizers).
//
// The same package is compiled twice: into the learner's WebAssembly module,
// where the Client calls out to the judge through a small host ABI, and into
// the judge itself, which uses the types and the wire codec. It deliberately
// avoids fmt, encoding/json and reflect: each would add most of a megabyte to
// every learner module, and wazero's compile time grows with code size.
package ctrl
