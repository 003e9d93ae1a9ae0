//go:build !linux

package main

// warmHeap does nothing where huge pages are not asked for by madvise.
func warmHeap() {}
