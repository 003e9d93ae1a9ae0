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
//
// Adding a kind: declare it in types.go (embedding TypeMeta and
// ObjectMeta, its status, if it has one, in a field named Status) with the
// directive //ctrl:kind wire=N apiVersion=G/V on its doc, N a wire byte
// no kind ever had; then run go generate ./judge/ctrl. Its constant, list
// type, wire codec, deep copy and registration (NewObject, Kinds, the
// judge's status helpers) are generated from the declaration, field by
// field, as one would write them by hand (internal/kindgen says which
// field types it can carry). testdata/wire.golden keeps the wire format of
// the kinds that exist: go test ./judge/ctrl -run Golden -update-golden
// adds the new one.
package ctrl

//go:generate go run ./internal/kindgen
