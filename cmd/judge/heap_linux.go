package main

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// warmHeapBytes is the fresh memory a judging process takes for its heap
// at start: about what one `judge test` grows its heap to (wazero's
// compiled code for a learner's module is most of it).
const warmHeapBytes = 64 << 20

// hugePageBytes is the size of a transparent huge page with 4 KiB pages.
const hugePageBytes = 2 << 20

// warmHeap gets the heap's memory ready for a short-lived process that
// judges. Every 4 KiB page a process touches first costs a page fault,
// and on a virtual machine that is microseconds (15 µs on the machine
// the figures in judge/RATIONALE.md come from): a `judge test` took
// some 17,000 of them in its own process. So the heap takes its memory
// in one piece, asks the kernel to back it with huge pages (which
// transparent huge pages in madvise mode, many distributions' default,
// give only on request; in always mode the heap has them anyway, in
// never mode nothing changes), and frees it at once. The allocations
// that follow reuse that memory: one fault for each 2 MiB.
func warmHeap() {
	b := make([]byte, warmHeapBytes) // fresh from the kernel: not touched
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := (hugePageBytes - p%hugePageBytes) % hugePageBytes
	if n := (uintptr(len(b)) - off) &^ (hugePageBytes - 1); n > 0 {
		unix.Madvise(b[off:off+n], unix.MADV_HUGEPAGE)
	}
	b = nil
	runtime.GC() // free, for what follows
}
