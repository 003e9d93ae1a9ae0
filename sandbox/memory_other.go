//go:build !linux

package sandbox

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator leaves linear memory to wazero's default (a Go slice)
// where the mapping used on Linux is not available.
func memoryAllocator(uint64) experimental.MemoryAllocator { return nil }
