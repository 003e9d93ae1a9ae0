//go:build !wasip1

package ctrl

import "os"

// Outside the judge there is no cluster to talk to.
func roundTrip(Op, []byte) []byte {
	panic("ctrl: this controller runs only inside the judge; try `judge test`")
}

// Main explains how to run the controller when the workspace is run natively.
func Main() {
	os.Stderr.WriteString("This file is judged, not run: use `judge test` in this folder.\n")
	os.Exit(2)
}
