package sandbox

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Compiling only the library code a judge runs. wazero compiles every
// function of a module before its first instance, and most of a learner's
// module is the Go runtime and standard library, much of it never called
// under a judge (the runtime's parts for signals, cgo, profiling,
// tracing, a collector that a small heap never starts; the packages'
// init-only and error paths, ...). So a function outside the program's
// own package and not in Config.Keep is compiled as a stub that calls the
// host with prunedOp and its index; the host stops the instance with a
// TrapPruned, and the caller runs again on the whole module
// (Runtime.Whole). Nothing else changes: indices, types, tables, data and
// memory are those of the whole module, so an instance that never reaches
// a stub does exactly what it would have done on the whole module, and
// one that reaches one is discarded. Measured: RATIONALE.md, "Why compile
// only what runs?".

// prunedOp is the host call a stub makes; the SDK's operations are small
// numbers.
const prunedOp = 0xFFFF_FFFF

// moduleNames is what pruning reads of a module: where its code section
// is, the function index of the host's `call`, and each function's name.
type moduleNames struct {
	imported int // functions imported: the first indices
	call     int // index of ctrljudge.call; -1: not imported
	code     wasmSection
	elems    wasmSection  // the element section; zero: none
	names    *wasmSection // the custom section "name"; nil: none
	byIndex  map[int]string
}

// readNames reads m's sections; ok is false for a module of a shape this
// does not know.
func readNames(m []byte) (info moduleNames, ok bool) {
	if len(m) < 8 || string(m[:4]) != "\x00asm" {
		return info, false
	}
	info.call = -1
	for i := 8; i < len(m); {
		id := m[i]
		size, n := uleb32(m[i+1:])
		if n == 0 || i+1+n+int(size) > len(m) {
			return info, false
		}
		s := wasmSection{i, i + 1 + n, i + 1 + n + int(size)}
		body := m[s.body:s.end]
		switch id {
		case 2:
			if !info.readImports(body) {
				return info, false
			}
		case 9:
			info.elems = s
		case 10:
			info.code = s
		case 0:
			l, n := uleb32(body)
			if n > 0 && n+int(l) <= len(body) && string(body[n:n+int(l)]) == "name" {
				info.names = &s
				info.byIndex = functionNames(body[n+int(l):])
			}
		}
		i = s.end
	}
	return info, info.code.end > 0
}

// readImports counts the imported functions and finds ctrljudge.call;
// false when an import is not a function (Go modules import nothing else).
func (info *moduleNames) readImports(b []byte) bool {
	count, n := uleb32(b)
	b = b[n:]
	for range count {
		var names [2]string
		for k := range names {
			l, n := uleb32(b)
			if n == 0 || n+int(l) > len(b) {
				return false
			}
			names[k], b = string(b[n:n+int(l)]), b[n+int(l):]
		}
		if len(b) == 0 || b[0] != 0 {
			return false
		}
		_, n := uleb32(b[1:])
		if n == 0 {
			return false
		}
		b = b[1+n:]
		if names == [2]string{hostModuleName, "call"} {
			info.call = info.imported
		}
		info.imported++
	}
	return true
}

// functionNames reads the function names subsection of a name section's
// body; a malformed one gives what was read before it.
func functionNames(b []byte) map[int]string {
	names := map[int]string{}
	for len(b) > 1 {
		id := b[0]
		size, n := uleb32(b[1:])
		if n == 0 || 1+n+int(size) > len(b) {
			return names
		}
		sub := b[1+n : 1+n+int(size)]
		b = b[1+n+int(size):]
		if id != 1 {
			continue
		}
		count, n := uleb32(sub)
		sub = sub[n:]
		for range count {
			idx, n := uleb32(sub)
			if n == 0 {
				return names
			}
			l, m := uleb32(sub[n:])
			if m == 0 || n+m+int(l) > len(sub) {
				return names
			}
			names[int(idx)] = string(sub[n+m : n+m+int(l)])
			sub = sub[n+m+int(l):]
		}
	}
	return names
}

// prunable says whether a function of this name may be compiled as a
// stub: anything but the program's own package, package main, and code
// made for its types (generic instances, equality functions), whose names
// hold "main." (names as Go's linker writes them, "/" as "_").
func prunable(name string) bool {
	return !strings.Contains(name, "main.")
}

// keepList is Config.Keep: names, and prefixes (the entries that end in
// "*"); and the packages the names are of. A package with no name in the
// list, other than the runtime's, is one the list was never made for (a
// learner's regexp, say): it is kept whole, or a program that uses it
// would always need the whole module.
type keepList struct {
	names    map[string]bool
	prefixes []string
	packages map[string]bool
}

func newKeepList(names []string) *keepList {
	k := &keepList{names: map[string]bool{}, packages: map[string]bool{}}
	for _, name := range names {
		if p, ok := strings.CutSuffix(name, "*"); ok {
			k.prefixes = append(k.prefixes, p)
		} else {
			k.names[name] = true
			k.packages[packageOf(name)] = true
		}
	}
	return k
}

// isRuntime says whether a function of this name belongs to the Go
// runtime.
func isRuntime(name string) bool {
	return strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "internal_runtime_")
}

// packageOf is the package part of a function's name ("regexp_syntax" of
// "regexp_syntax.(*parser).op").
func packageOf(name string) string {
	pkg, _, _ := strings.Cut(name, ".")
	return pkg
}

// has says whether the function named name is kept.
func (k *keepList) has(name string) bool {
	if k.names[name] {
		return true
	}
	if !isRuntime(name) && !k.packages[packageOf(name)] {
		return true
	}
	for _, p := range k.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// namesEdit drops m's name section; nil when it has none.
func namesEdit(info moduleNames) *sectionEdit {
	if info.names == nil {
		return nil
	}
	return &sectionEdit{at: *info.names}
}

// pruneEdit is the edit that compiles every prunable function keep lacks
// as a stub, and which they are (by defined function: the first is
// info.imported's); nil when m has no names, does not import
// ctrljudge.call, or has a code section it cannot read.
func pruneEdit(m []byte, info moduleNames, keep *keepList) (*sectionEdit, []bool) {
	if info.names == nil || info.call < 0 {
		return nil, nil
	}
	sec := m[info.code.body:info.code.end]
	count, n := uleb32(sec)
	if n == 0 {
		return nil, nil
	}
	// Which functions become stubs, read before anything is written.
	stub := make([]bool, count)
	pruned, total := 0, 5 // the new body's size, at most
	rest := sec[n:]
	for i := range int(count) {
		size, n := uleb32(rest)
		if n == 0 || n+int(size) > len(rest) {
			return nil, nil
		}
		rest = rest[n+int(size):]
		idx := info.imported + i
		if name, ok := info.byIndex[idx]; ok && prunable(name) && !keep.has(name) {
			stub[i] = true
			pruned++
			total += maxStubBytes
		} else {
			total += n + int(size)
		}
	}
	if pruned == 0 {
		return nil, nil
	}
	return &sectionEdit{at: info.code, size: total, write: func(out []byte) []byte {
		out = appendUleb(out, count)
		rest := sec[n:]
		for i := range int(count) {
			size, n := uleb32(rest)
			fn := rest[:n+int(size)]
			rest = rest[n+int(size):]
			if stub[i] {
				out = appendStub(out, uint32(info.imported+i), uint32(info.call))
			} else {
				out = append(out, fn...)
			}
		}
		return out
	}}, stub
}

// stubs counts the functions stub marks.
func stubs(stub []bool) int {
	n := 0
	for _, s := range stub {
		if s {
			n++
		}
	}
	return n
}

// tableEdit leaves the stubs out of the table. Go's linker puts every
// function in it, as one element segment (a function's index in the
// table is its PC_F: the runtime calls through it to resume a goroutine,
// and to call a func value or an interface's method), and wazero
// evaluates each element at every instance: 1,661 for 171, most of a
// start's allocations. A stub never runs unless the instance is then
// discarded, so its slot may as well be empty: one segment per run of
// the functions kept. A call through an empty slot traps as an invalid
// table access, which a pruned module's instance reports as TrapPruned
// (classify), as the stub would have. nil when the section is not
// Go's one segment over every function in order.
func tableEdit(m []byte, info moduleNames, stub []bool) *sectionEdit {
	if info.elems.end == 0 || stub == nil {
		return nil
	}
	b := m[info.elems.body:info.elems.end]
	// count 1; flags 0 (active, table 0, function indices); i32.const
	// base; end; the entries.
	if len(b) < 3 || b[0] != 1 || b[1] != 0 || b[2] != 0x41 {
		return nil
	}
	b = b[3:]
	base, n := sleb32(b)
	if n == 0 || n >= len(b) || b[n] != 0x0b {
		return nil
	}
	b = b[n+1:]
	count, n := uleb32(b)
	if n == 0 || int(count) != len(stub) {
		return nil
	}
	b = b[n:]
	for i := range int(count) {
		idx, n := uleb32(b)
		if n == 0 || int(idx) != info.imported+i {
			return nil
		}
		b = b[n:]
	}
	if len(b) != 0 {
		return nil
	}
	var runs [][2]int // [first, end) of each run of kept functions
	for i := 0; i < len(stub); {
		if stub[i] {
			i++
			continue
		}
		j := i
		for j < len(stub) && !stub[j] {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	size := 5
	for _, r := range runs {
		size += 1 + 1 + 5 + 1 + 5 + 5*(r[1]-r[0])
	}
	return &sectionEdit{at: info.elems, size: size, write: func(out []byte) []byte {
		out = appendUleb(out, uint32(len(runs)))
		for _, r := range runs {
			out = append(out, 0, 0x41)
			out = appendSleb(out, base+int32(r[0]))
			out = append(out, 0x0b)
			out = appendUleb(out, uint32(r[1]-r[0]))
			for i := r[0]; i < r[1]; i++ {
				out = appendUleb(out, uint32(info.imported+i))
			}
		}
		return out
	}}
}

// maxStubBytes bounds what appendStub appends: its size (one byte), 13
// bytes and two LEB128 indices of at most 5.
const maxStubBytes = 1 + 13 + 5 + 5

// appendStub appends the body of a pruned function: call the host with
// prunedOp and the function's index, then trap. It validates whatever the
// function's type: after unreachable, any result will do.
func appendStub(b []byte, idx, call uint32) []byte {
	f := []byte{0}                // no locals
	f = append(f, 0x41)           // i32.const
	f = appendSleb(f, -1)         //   prunedOp
	f = append(f, 0x41)           // i32.const
	f = appendSleb(f, int32(idx)) //   the function's index
	f = append(f, 0x41, 0, 0x41, 0, 0x41, 0)
	f = append(f, 0x10) // call ctrljudge.call
	f = appendUleb(f, call)
	f = append(f, 0x00, 0x0b) // unreachable, end
	b = appendUleb(b, uint32(len(f)))
	return append(b, f...)
}

// callRecorder records the names of the functions instances call: what
// Config.Keep is made from (Config.RecordCalls).
type callRecorder struct {
	mu     sync.Mutex
	called map[string]bool
}

// factory returns a listener factory for a module whose functions are
// named by names.
func (r *callRecorder) factory(names map[int]string) experimental.FunctionListenerFactory {
	return experimental.FunctionListenerFactoryFunc(func(def api.FunctionDefinition) experimental.FunctionListener {
		name, ok := names[int(def.Index())]
		if !ok {
			return nil
		}
		var once atomic.Bool
		return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
			if once.CompareAndSwap(false, true) {
				r.mu.Lock()
				r.called[name] = true
				r.mu.Unlock()
			}
		})
	})
}
