// Package sandbox compiles a Go program to a WebAssembly reactor module and
// runs it under limits in wazero.
//
// It knows nothing of Kubernetes. A Program is a set of files laid out as a
// Go module, one of them untrusted; Build turns it into a module with the
// installed toolchain (GOOS=wasip1, -buildmode=c-shared, no network, a
// deadline). A Runtime meters every module it compiles (a step at every
// function entry and loop header, meter.go), caches them by content, and
// instantiates them with no filesystem, environment, arguments or network,
// a budget of steps per call, a memory cap, virtual time, a deadline on
// every call as a net, and captured, capped output. The
// module reaches its host only through two imports, routed to a Host:
//
//	ctrljudge.call(op, msg, msgLen, buf, bufCap) -> replyLen
//	ctrljudge.take(buf, bufCap) -> replyLen
//
// call hands the host a message and receives the reply in buf if it fits;
// otherwise the module grows buf and fetches the reply with take. Every
// pointer and length is checked; a module that breaks the protocol traps.
package sandbox
