// Package integration holds end-to-end tests that build the judge
// command, run its server on localhost and check the records it leaves:
// a server killed with submissions in flight settles every one of them at
// the next start, and many learners submitting at once lose nothing. They
// build a binary and judge real code, so `go test -short` skips them.
package integration
