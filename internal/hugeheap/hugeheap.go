// Package hugeheap starts a short-lived Go process's heap in transparent
// huge pages: the judging commands run it at start, and the linker of
// learners' builds is built with it (sandbox/linker.go), from this same
// source.
package hugeheap

import (
	_ "embed"
	"strings"
)

//go:embed warm_linux.go
var warmSource string

// MainFile is Warm's source as a file of a package main that runs it at
// start, to add to a program built from source that is not ours.
func MainFile() string {
	return strings.Replace(warmSource, "package hugeheap", "package main", 1) +
		"\nfunc init() { Warm() }\n"
}
