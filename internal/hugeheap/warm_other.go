//go:build !linux

package hugeheap

// Warm does nothing where huge pages are not asked for by madvise.
func Warm() {}
