//go:build wasip1

package ctrl

import "unsafe"

// The host ABI. The module makes every call through hostCall: it passes its
// message and a buffer for the reply; the judge writes the reply there if it
// fits and returns its length either way. A longer reply is fetched with
// hostTake into a buffer grown to size.

//go:wasmimport ctrljudge call
func hostCall(op uint32, msg unsafe.Pointer, msgLen uint32, buf unsafe.Pointer, bufCap uint32) uint32

//go:wasmimport ctrljudge take
func hostTake(buf unsafe.Pointer, bufCap uint32) uint32

var reply = make([]byte, 64<<10)

func roundTrip(op Op, msg []byte) []byte {
	var p unsafe.Pointer
	if len(msg) > 0 {
		p = unsafe.Pointer(&msg[0])
	}
	n := hostCall(uint32(op), p, uint32(len(msg)), unsafe.Pointer(&reply[0]), uint32(len(reply)))
	if int(n) > len(reply) {
		reply = make([]byte, n)
		hostTake(unsafe.Pointer(&reply[0]), n)
	}
	return reply[:n]
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
