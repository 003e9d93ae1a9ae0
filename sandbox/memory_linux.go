package sandbox

import (
	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapMemory backs a module's linear memory with an anonymous mapping of
// its whole maximum, reserved up front and committed by the kernel page
// by page as the module touches it. Growing never copies (a Go slice would
// be reallocated and copied on every growth, twice the memory for a
// moment), and the memory lives outside the Go heap, so a module that
// fills its 64 MiB costs the judge 64 MiB of RSS, not a heap goal twice
// that; it is returned to the kernel the moment the instance closes.
//
// wazero frees a memory only from the goroutine that runs the module or
// after its call returned (a deadline marks the module closed and defers
// the release to that goroutine), so no call can read an unmapped page.
type mmapMemory struct{ buf []byte }

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		return nil // past the maximum: memory.grow fails in the module
	}
	return m.buf[:size]
}

func (m *mmapMemory) Free() {
	if m.buf != nil {
		unix.Munmap(m.buf[:cap(m.buf)])
		m.buf = nil
	}
}

// memoryAllocator reserves at most maxBytes for any module, whatever
// maximum the module declares.
func memoryAllocator(maxBytes uint64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		if max == 0 || max > maxBytes {
			max = maxBytes
		}
		buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
		if err != nil {
			return &mmapMemory{} // Reallocate fails: the instance does not start
		}
		return &mmapMemory{buf: buf[:0]}
	})
}
