//go:build wasip1

package ctrl

import (
	"runtime"
	"unsafe"
)

// The host ABI. The module makes every call through hostCall: it passes its
// message and a buffer for the reply; the judge writes the reply there if it
// fits and returns its length either way. A longer reply is fetched with
// hostTake into a buffer grown to size.

//go:wasmimport ctrljudge call
func hostCall(op uint32, msg unsafe.Pointer, msgLen uint32, buf unsafe.Pointer, bufCap uint32) uint32

//go:wasmimport ctrljudge take
func hostTake(buf unsafe.Pointer, bufCap uint32) uint32

// replies is the room left for the judge's replies, written one after
// another and never over each other: the strings decoded from a reply
// are pieces of its bytes (unsafe.String), where copying each reply into
// a string of its own cost an allocation and a copy in every call. A
// spent arena stays alive as long as some string of it does.
var replies = make([]byte, replyArenaBytes)

const (
	replyArenaBytes = 64 << 10
	// minReplyRoom: with less room than this left a fresh arena is
	// taken before the call, so that most replies fit at once.
	minReplyRoom = 4 << 10
)

func roundTrip(op Op, msg []byte) string {
	var p unsafe.Pointer
	if len(msg) > 0 {
		p = unsafe.Pointer(&msg[0])
	}
	if len(replies) < minReplyRoom {
		replies = make([]byte, replyArenaBytes)
	}
	n := int(hostCall(uint32(op), p, uint32(len(msg)), unsafe.Pointer(&replies[0]), uint32(len(replies))))
	var out []byte
	if n <= len(replies) {
		out, replies = replies[:n], replies[n:]
	} else {
		if n > replyArenaBytes/2 {
			out = make([]byte, n) // a reply of its own
		} else {
			replies = make([]byte, replyArenaBytes)
			out, replies = replies[:n], replies[n:]
		}
		hostTake(unsafe.Pointer(&out[0]), uint32(n))
	}
	return unsafe.String(unsafe.SliceData(out), n)
}

//go:wasmexport ctrljudge_abi_version
func exportABIVersion() int32 { return ABIVersion }

//go:wasmexport ctrljudge_reconcile
func exportReconcile() { reconcileOnce() }

// Main does nothing in the judge: a reactor module's main never runs.
func Main() {}

// The reconciles run on the goroutine that ran the initialisers, whose
// stack starts at a few KiB; growing it means copying it, frame by frame,
// which in an interpreter costs more than most reconciles. Growing it once
// here puts the grown stack in the snapshot every instance starts from.
func init() {
	// Nothing reads a memory profile of the learner's module, and taking
	// a sample walks the stack in the interpreter every 512 KiB allocated.
	runtime.MemProfileRate = 0
	growStack()
	warmHeap()
}

var stackSink byte

//go:noinline
func growStack() {
	var frame [32 << 10]byte
	frame[stackSink] = 1
	stackSink = frame[len(frame)-1]
}

// The heap, too, starts each instance as the snapshot left it: the
// runtime has a span cached for only the few size classes the
// initialisers used, and the first allocation of any other class takes a
// fresh span from the heap, about a fifth of what a reconcile costs in
// the interpreter. One allocation of each small size class, pointers and
// no pointers, puts a cached span for it in the snapshot.
func warmHeap() {
	for size := 8; size <= maxWarmSize; size = max(size+8, size*9/8&^7) {
		bytesSink = make([]byte, size)
		pointersSink = make([]*byte, size/8)
	}
	bytesSink, pointersSink = nil, nil
}

// maxWarmSize is the largest size class warmHeap reaches: a List's items
// and its reply are larger, but take a span of their own every few
// allocations anyway.
const maxWarmSize = 4 << 10

var (
	bytesSink    []byte
	pointersSink []*byte
)
