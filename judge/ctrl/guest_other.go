//go:build !wasip1

package ctrl

import "os"

// NativeHost answers host calls in a native (non-WebAssembly) build. The
// judge's own tests set it to drive a Reconciler without compiling to
// wasm; in a learner's workspace it stays nil.
var NativeHost func(op Op, msg []byte) []byte

func roundTrip(op Op, msg []byte) string {
	if NativeHost == nil {
		panic("ctrl: this controller runs only inside the judge; try `judge test`")
	}
	return string(NativeHost(op, msg))
}

// ReconcileNative runs the registered Reconciler once through NativeHost.
func ReconcileNative() { reconcileOnce() }

// Main explains how to run the controller when the workspace is run natively.
func Main() {
	os.Stderr.WriteString("This file is judged, not run: use `judge test` in this folder.\n")
	os.Exit(2)
}
