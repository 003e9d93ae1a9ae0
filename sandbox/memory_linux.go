package sandbox

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapMemory backs a module's linear memory with an anonymous mapping of
// its whole maximum, reserved up front and committed by the kernel page
// by page as the module touches it. Growing never copies (a Go slice would
// be reallocated and copied on every growth, twice the memory for a
// moment), and the memory lives outside the Go heap, so a module that
// fills its 64 MiB costs the judge 64 MiB of RSS, not a heap goal twice
// that.
//
// wazero frees a memory only from the goroutine that runs the module or
// after its call returned (a deadline marks the module closed and defers
// the release to that goroutine), so no call can read an unmapped page,
// nor one handed on to the next instance.
type mmapMemory struct {
	buf  []byte
	used int // the most the module has had: what reuse must clear
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		return nil // past the maximum: memory.grow fails in the module
	}
	m.used = max(m.used, int(size))
	return m.buf[:size]
}

// Free hands a mapping that stayed small to the next instance, cleared:
// a submission makes dozens of instances, and each would otherwise take
// a page fault for every page the Go runtime touches as it starts (it
// clears megabytes). A mapping that grew large goes back to the kernel at
// once, so a memory bomb's 64 MiB is not kept.
func (m *mmapMemory) Free() {
	if m.buf == nil {
		return
	}
	buf := m.buf[:cap(m.buf)]
	m.buf = nil
	if m.used <= maxPooledMemoryBytes {
		clear(buf[:m.used])
		memoryPool.mu.Lock()
		if len(memoryPool.free) < 2*runtime.GOMAXPROCS(0) {
			memoryPool.free = append(memoryPool.free, buf)
			buf = nil
		}
		memoryPool.mu.Unlock()
	}
	if buf != nil {
		unix.Munmap(buf)
	}
}

// maxPooledMemoryBytes is the largest memory kept for reuse: a Go module
// after start has a few MiB.
const maxPooledMemoryBytes = 8 << 20

// memoryPool holds cleared mappings of the whole maximum, ready for reuse.
var memoryPool struct {
	mu   sync.Mutex
	free [][]byte
}

// memoryAllocator reserves at most maxBytes for any module, whatever
// maximum the module declares.
func memoryAllocator(maxBytes uint64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		if max == 0 || max > maxBytes {
			max = maxBytes
		}
		memoryPool.mu.Lock()
		for i, buf := range memoryPool.free {
			if uint64(len(buf)) == max {
				memoryPool.free = append(memoryPool.free[:i], memoryPool.free[i+1:]...)
				memoryPool.mu.Unlock()
				return &mmapMemory{buf: buf[:0]}
			}
		}
		memoryPool.mu.Unlock()
		buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
		if err != nil {
			return &mmapMemory{} // Reallocate fails: the instance does not start
		}
		// Huge pages where the kernel offers them on request (transparent
		// huge pages in madvise mode): a module touches megabytes as it
		// starts, and a fault for each 4 KiB page costs far more than
		// clearing it (RATIONALE.md, "Why a mapping of 64 MiB for each
		// memory?"). Where they are
		// off, nothing changes.
		unix.Madvise(buf, unix.MADV_HUGEPAGE)
		return &mmapMemory{buf: buf[:0]}
	})
}
