package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// The work meter. wazero has no instruction fuel, and wall time depends on
// how busy the machine is, so every module is rewritten before it is
// compiled to count its own work: a step is taken at every function entry
// and at every loop header of the whole module — the learner's code, the
// SDK, the standard library and the Go runtime alike — and after every
// meterRunInstrs instructions of straight code; bulk memory instructions
// take a step per 2^meterCopyShift bytes they copy or fill. Go's
// WebAssembly jumps between a function's basic blocks by branching back to
// one loop around them, so a step is, in Go terms, a call or a jump, and
// never more than about meterRunInstrs instructions or 1 KiB copied.
//
// The count lives in a mutable global of ours (exported as
// fuelExport; Go's code cannot name a wasm global) that holds the steps
// left. The host sets it before every call and reads back what is left
// after, so budgets are exact and no host call is made while code runs.
// A step is
//
//	global.get $fuel; global.get $fuel; global.get $fuel
//	i32.div_u; i32.sub; global.set $fuel
//
// that is fuel - fuel/fuel: one less, with no branch, and a division by
// zero — a trap — once nothing is left. Go's compiler checks every
// division of its own before making it, so that trap is only ever ours;
// the global reading zero confirms it (classify).

const (
	// fuelExport names the meter's global among the module's exports.
	fuelExport = "ctrljudge.fuel"
	// meterCopyShift sets how many bytes a memory.copy or memory.fill
	// moves for one step, 1 KiB: a bulk copy runs at native speed, faster
	// per KiB than the interpreter takes one step.
	meterCopyShift = 10
	// meterRunInstrs is the longest run of instructions without a step:
	// a long straight run of code (a learner's thousand assignments in a
	// row) takes a step every so many, so that a step is never much
	// work. Go's basic blocks are mostly far shorter.
	meterRunInstrs = 100
	// maxGrant is the most steps one call can be given: the global is an
	// i32, and a step is counted as unsigned.
	maxGrant = 1<<31 - 1
)

var errUnmeterable = errors.New("sandbox: the module has an instruction the meter does not know")

// meterModule returns m with the meter added: a new mutable i32 global,
// exported as fuelExport, and a step at every function entry, loop
// header, memory.copy and memory.fill. It takes the bodies it metered
// before from cache, if not nil, and keeps those it meters there.
func meterModule(m []byte, cache *meterCache) ([]byte, error) {
	secs, ok := sectionsOf(m)
	if !ok {
		return nil, errors.New("sandbox: not a well-formed WebAssembly module")
	}
	types, imports, funcs, globals, exports, code := secs[1], secs[2], secs[3], secs[6], secs[7], secs[10]
	if types == nil || funcs == nil || globals == nil || exports == nil || code == nil {
		return nil, errors.New("sandbox: the module lacks a section the meter needs")
	}
	if importsGlobal(m, imports) {
		return nil, errors.New("sandbox: the module imports a global")
	}
	params, err := paramCounts(m[types.body:types.end])
	if err != nil {
		return nil, err
	}
	fbody := m[funcs.body:funcs.end]
	nfuncs, k := uleb32(fbody)
	if k == 0 {
		return nil, errors.New("sandbox: a malformed function section")
	}
	typeOf := make([]uint32, nfuncs)
	for i := range typeOf {
		t, n := uleb32(fbody[k:])
		if n == 0 || int(t) >= len(params) {
			return nil, errors.New("sandbox: a malformed function section")
		}
		typeOf[i] = t
		k += n
	}

	gbody := m[globals.body:globals.end]
	gcount, gk := uleb32(gbody)
	if gk == 0 {
		return nil, errors.New("sandbox: a malformed global section")
	}
	fuel := gcount // no global is imported, so the new one's index
	globalEdit := &sectionEdit{at: *globals, size: 5 + len(gbody) + 4, write: func(out []byte) []byte {
		out = appendUleb(out, gcount+1)
		out = append(out, gbody[gk:]...)
		return append(out, 0x7f, 1, 0x41, 0, 0x0b) // mutable i32 = 0
	}}
	ebody := m[exports.body:exports.end]
	ecount, ek := uleb32(ebody)
	if ek == 0 {
		return nil, errors.New("sandbox: a malformed export section")
	}
	exportEdit := &sectionEdit{at: *exports, size: 5 + len(ebody) + 1 + len(fuelExport) + 1 + 5, write: func(out []byte) []byte {
		out = appendUleb(out, ecount+1)
		out = append(out, ebody[ek:]...)
		out = appendUleb(out, uint32(len(fuelExport)))
		out = append(out, fuelExport...)
		out = append(out, 3) // a global
		return appendUleb(out, fuel)
	}}

	step := appendStep(nil, fuel)
	cbody := m[code.body:code.end]
	count, ck := uleb32(cbody)
	if ck == 0 || count != nfuncs {
		return nil, errors.New("sandbox: a malformed code section")
	}
	// Each body is rewritten into one buffer; the section is written from it.
	out := make([]byte, 0, len(cbody)+len(cbody)/4)
	var fn []byte
	rest := cbody[ck:]
	for i := range int(count) {
		size, n := uleb32(rest)
		if n == 0 || n+int(size) > len(rest) {
			return nil, errors.New("sandbox: a malformed code section")
		}
		body := rest[n : n+int(size)]
		rest = rest[n+int(size):]
		metered, hit := cache.get(body, params[typeOf[i]], fuel)
		if !hit {
			fn, err = meterBody(fn[:0], body, params[typeOf[i]], fuel, step)
			if err != nil {
				return nil, fmt.Errorf("%w (function %d)", err, i)
			}
			metered = fn
			cache.put(body, params[typeOf[i]], fuel, fn)
		}
		out = appendUleb(out, uint32(len(metered)))
		out = append(out, metered...)
	}
	codeEdit := &sectionEdit{at: *code, size: 5 + len(out), write: func(b []byte) []byte {
		b = appendUleb(b, count)
		return append(b, out...)
	}}
	return rewrite(m, globalEdit, exportEdit, codeEdit), nil
}

// meterCache keeps metered function bodies, by all a body's metering
// depends on: its bytes, its parameter count and the fuel global's index.
// The runtime's, the library's and the SDK's functions are the same in
// every learner's module, so a warm judge meters only what is new:
// BenchmarkMeterModule meters a module whole in 41 ms, a second learner's
// through a warm cache in 4.6. The module written is the same either way
// (TestMeterCacheChangesNothing).
type meterCache struct {
	mu    sync.Mutex
	m     map[uint64]map[string][]byte // by params<<32 | fuel, then body
	bytes int
}

// maxMeterCacheBytes bounds what a meterCache holds, keys and values: a
// few modules' code. Past it the cache starts again, empty.
const maxMeterCacheBytes = 64 << 20

func newMeterCache() *meterCache { return &meterCache{m: map[uint64]map[string][]byte{}} }

func (c *meterCache) get(body []byte, params int, fuel uint32) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[uint64(params)<<32|uint64(fuel)][string(body)]
	return b, ok
}

func (c *meterCache) put(body []byte, params int, fuel uint32, metered []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+len(body)+len(metered) > maxMeterCacheBytes {
		c.m, c.bytes = map[uint64]map[string][]byte{}, 0
	}
	k := uint64(params)<<32 | uint64(fuel)
	if c.m[k] == nil {
		c.m[k] = map[string][]byte{}
	}
	c.m[k][string(body)] = append([]byte(nil), metered...)
	c.bytes += len(body) + len(metered)
}

// appendStep appends one step: fuel - fuel/fuel, which traps at zero.
func appendStep(b []byte, fuel uint32) []byte {
	for range 3 {
		b = append(b, 0x23) // global.get
		b = appendUleb(b, fuel)
	}
	b = append(b, 0x6e, 0x6b) // i32.div_u, i32.sub
	b = append(b, 0x24)       // global.set
	return appendUleb(b, fuel)
}

// appendBulkCharge appends what comes before a memory.copy or
// memory.fill: its length, on top of the stack, is kept in local t, a
// step per 2^meterCopyShift bytes is taken (or, if fewer are left, the
// fuel is emptied and the step that traps taken), and the length is put
// back.
func appendBulkCharge(b []byte, fuel, t uint32, step []byte) []byte {
	cost := func(b []byte) []byte {
		b = append(b, 0x20) // local.get t
		b = appendUleb(b, t)
		return append(b, 0x41, meterCopyShift, 0x76) // i32.const; i32.shr_u
	}
	b = append(b, 0x21) // local.set t
	b = appendUleb(b, t)
	b = append(b, 0x23) // global.get fuel
	b = appendUleb(b, fuel)
	b = cost(b)
	b = append(b, 0x49, 0x04, 0x40) // i32.lt_u; if (no result)
	b = append(b, 0x41, 0, 0x24)    // i32.const 0; global.set fuel
	b = appendUleb(b, fuel)
	b = append(b, step...)
	b = append(b, 0x0b)     // end
	b = append(b, 0x23)     // global.get fuel
	b = appendUleb(b, fuel) //
	b = cost(b)
	b = append(b, 0x6b, 0x24) // i32.sub; global.set fuel
	b = appendUleb(b, fuel)
	b = append(b, 0x20) // local.get t
	return appendUleb(b, t)
}

// meterBody appends body, metered, to out. params is how many parameters
// the function takes (its first locals).
func meterBody(out, body []byte, params int, fuel uint32, step []byte) ([]byte, error) {
	groups, gw := uleb32(body)
	if gw == 0 {
		return nil, errUnmeterable
	}
	k := gw
	locals := params
	for range groups {
		n, w := uleb32(body[k:])
		if w == 0 || k+w >= len(body) {
			return nil, errUnmeterable
		}
		locals += int(n)
		k += w + 1
	}
	code := body[k:]
	// A bulk instruction needs a local of ours to hold its length.
	bulk := false
	for at := 0; at < len(code); {
		n, kind := instrLen(code[at:])
		if n == 0 {
			return nil, errUnmeterable
		}
		bulk = bulk || kind == instrBulk
		at += n
	}
	t := uint32(locals)
	if bulk {
		out = appendUleb(out, groups+1)
		out = append(out, body[gw:k]...)
		out = append(out, 1, 0x7f) // one i32
	} else {
		out = append(out, body[:k]...)
	}
	if !loopOnEntry(code) {
		out = append(out, step...) // the entry
	}
	since := 0 // instructions since the last step, in order
	for at := 0; at < len(code); {
		n, kind := instrLen(code[at:])
		if since >= meterRunInstrs {
			out = append(out, step...)
			since = 0
		}
		switch kind {
		case instrLoop:
			out = append(out, code[at:at+n]...)
			out = append(out, step...)
			since = 0
		case instrBulk:
			out = appendBulkCharge(out, fuel, t, step)
			out = append(out, code[at:at+n]...)
		default:
			out = append(out, code[at:at+n]...)
			since++
		}
		at += n
	}
	return out, nil
}

// loopOnEntry says whether every call of a function meets a loop header
// before it can branch, return or trap: then the loop's step is the
// entry's. Most Go functions are of this shape: a stack check, then the
// loop around their basic blocks.
func loopOnEntry(code []byte) bool {
	var ifs []bool // the open blocks: an if's, or not
	for at := 0; at < len(code); {
		n, kind := instrLen(code[at:])
		if n == 0 {
			return false
		}
		switch op := code[at]; {
		case kind == instrLoop:
			if !slices.Contains(ifs, true) {
				return true
			}
			ifs = append(ifs, false)
		case op == 0x02: // block
			ifs = append(ifs, false)
		case op == 0x04: // if
			ifs = append(ifs, true)
		case op == 0x0b: // end
			if len(ifs) == 0 {
				return false // the function's end
			}
			ifs = ifs[:len(ifs)-1]
		case op == 0x00, op == 0x0c, op == 0x0d, op == 0x0e, op == 0x0f, op == 0x12, op == 0x13:
			return false // unreachable, br, br_if, br_table, return, return_call(_indirect)
		}
		at += n
	}
	return false
}

type instrKind int

const (
	instrPlain instrKind = iota
	instrLoop
	instrBulk // memory.copy or memory.fill
)

// instrLen is the length of the instruction at the start of b, with its
// immediates, and what kind it is; 0 for one it does not know. It knows
// the instructions Go's compiler and assembler emit for wasip1 — the
// first version of WebAssembly, sign extension, non-trapping conversions
// and bulk memory — and those of reference types and tail calls.
func instrLen(b []byte) (int, instrKind) {
	// skip moves past n LEB128 immediates after the first i bytes.
	skip := func(i, n int) int {
		for range n {
			for {
				if i >= len(b) {
					return 0
				}
				c := b[i]
				i++
				if c&0x80 == 0 {
					break
				}
			}
		}
		return i
	}
	op := b[0]
	switch {
	case op == 0x00, op == 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b, op == 0xd1:
		return 1, instrPlain
	case op == 0x02, op == 0x04: // block, if: a block type
		return skip(1, 1), instrPlain
	case op == 0x03: // loop
		return skip(1, 1), instrLoop
	case op == 0x0c, op == 0x0d, op == 0x10, op == 0x12, op == 0xd2: // br, br_if, call, return_call, ref.func
		return skip(1, 1), instrPlain
	case op == 0x0e: // br_table
		n, w := uleb32(b[1:])
		if w == 0 {
			return 0, 0
		}
		return skip(1+w, int(n)+1), instrPlain
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
		return skip(1, 2), instrPlain
	case op == 0x1c: // select t*
		n, w := uleb32(b[1:])
		if w == 0 || 1+w+int(n) > len(b) {
			return 0, 0
		}
		return 1 + w + int(n), instrPlain
	case op >= 0x20 && op <= 0x26: // locals, globals, table.get/set
		return skip(1, 1), instrPlain
	case op >= 0x28 && op <= 0x3e: // loads and stores: align, offset
		return skip(1, 2), instrPlain
	case op == 0x3f, op == 0x40: // memory.size, memory.grow
		return skip(1, 1), instrPlain
	case op == 0x41, op == 0x42: // i32.const, i64.const
		return skip(1, 1), instrPlain
	case op == 0x43:
		return fixed(b, 5), instrPlain
	case op == 0x44:
		return fixed(b, 9), instrPlain
	case op >= 0x45 && op <= 0xc4: // numeric, sign extension
		return 1, instrPlain
	case op == 0xd0: // ref.null t
		return fixed(b, 2), instrPlain
	case op == 0xfc:
		sub, w := uleb32(b[1:])
		if w == 0 {
			return 0, 0
		}
		switch {
		case sub <= 7: // saturating conversions
			return 1 + w, instrPlain
		case sub == 8, sub == 12, sub == 14: // memory.init, table.init, table.copy
			return skip(1+w, 2), instrPlain
		case sub == 9, sub == 13, sub == 15, sub == 16, sub == 17: // data.drop, elem.drop, table.grow/size/fill
			return skip(1+w, 1), instrPlain
		case sub == 10: // memory.copy: two memories
			return skip(1+w, 2), instrBulk
		case sub == 11: // memory.fill: one memory
			return skip(1+w, 1), instrBulk
		}
	}
	return 0, 0
}

func fixed(b []byte, n int) int {
	if len(b) < n {
		return 0
	}
	return n
}

// paramCounts reads the type section: how many parameters each type has.
func paramCounts(b []byte) ([]int, error) {
	bad := errors.New("sandbox: a malformed type section")
	count, k := uleb32(b)
	if k == 0 {
		return nil, bad
	}
	out := make([]int, count)
	for i := range out {
		if k >= len(b) || b[k] != 0x60 {
			return nil, bad
		}
		k++
		np, w := uleb32(b[k:])
		if w == 0 || k+w+int(np) > len(b) {
			return nil, bad
		}
		out[i] = int(np)
		k += w + int(np)
		nr, w := uleb32(b[k:])
		if w == 0 || k+w+int(nr) > len(b) {
			return nil, bad
		}
		k += w + int(nr)
	}
	if k != len(b) {
		return nil, bad
	}
	return out, nil
}
