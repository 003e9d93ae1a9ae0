package sandbox

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// Starting an instance from a snapshot. A Go module's `_initialize` (the
// runtime's start and every package initialiser) is the same work in every
// instance, about 10 ms in wazero's interpreter, and a submission makes
// dozens of instances. Its result is a pure function of the module and of
// what the module read from outside while it ran: random bytes are the
// stream of the instance's random key (Limits.Random), stdin is empty and
// the monotonic clock starts at the same reading in every instance, so
// that leaves the random key, the wall clock (read by initialisers that
// call time.Now), the host (ctrljudge.call), and the step and output
// limits (which can only stop it). The Go runtime seeds its hash seeds,
// map order, select and math/rand from the random bytes in `_initialize`,
// so a snapshot serves only instances under the key it was taken with:
// a module keeps its snapshots by key. So the first instance under a key
// runs `_initialize` as before, watched; if it asked the host nothing and
// the clock did not move, the state it ends in is kept: the linear memory
// and every mutable global, with the steps it took, the output it wrote
// and the random bytes it read. Later instances under that key start from
// the copy: instantiated without a start function, the memory and globals
// set, the steps charged, the output written again in the same pieces and
// the random stream moved on as far. One copy serves every instance under
// a key, unless `_initialize` read the wall clock: then one is kept per
// reading. A module keeps snapshots for at most maxRandomKeysPerModule
// keys (a submission judges with one); instances under any further key
// run `_initialize`, unwatched. Where the limits would have stopped
// `_initialize`, the instance starts the old way and stops the same way.
// Measured: RATIONALE.md, "Why start from a snapshot?".
//
// wazero's API reaches only exported globals, so the module is compiled
// with every mutable global it defines exported under a name of ours
// (exportEdit); Go's code cannot name a wasm export, let alone read one.
// Tables and the rest of wazero's state need no copy: Go's code never
// writes its table, and the WASI state (stdio, clock, random) is the
// host's, the same for every instance under a key.

const (
	// globalExportPrefix names the exports of a module's mutable globals.
	globalExportPrefix = "ctrljudge.snapshot.global."
	// maxSnapshotsPerModule bounds the wall-clock readings a module keeps a
	// snapshot for under one random key, when its initialisers read the
	// wall clock: a submission starts its instances at a handful of
	// instants (171's reference solution: 56 instances, 9 instants).
	maxSnapshotsPerModule = 32
	// maxRandomKeysPerModule bounds the random keys (Limits.Random) a
	// module keeps snapshots for. The judge gives a submission's tests one
	// key (a scenario kept from a verdict may keep another), and a module
	// compiled once serves the submissions of its code (a reference
	// solution's, every submission of its exercise) at the seeds they are
	// judged with, mostly the one a server judges with. Instances under a key past the
	// bound run `_initialize`, every one, as with NoSnapshots: slower,
	// never different. The snapshots' bytes are bounded apart
	// (maxSnapshotBytes), and one key's share the chunks the module's
	// first snapshot holds.
	maxRandomKeysPerModule = 64
	// maxInitOutputBytes is the most output of `_initialize` a snapshot
	// keeps to write again; more, and every instance runs it.
	maxInitOutputBytes = 64 << 10
	// chunkBytes is the unit a snapshot's memory is kept in: chunks as
	// they are at instantiation (zero, or the data segments' bytes) are
	// not kept, and chunks equal to those of the module's first snapshot
	// are shared with it.
	chunkBytes = 4 << 10
	// maxSnapshotBytes bounds the memory a module's snapshots hold, of
	// every random key, chunks shared counted once: a 171 learner's first
	// is 0.55 MB, each further one (at another clock reading) 45 KB,
	// since only what that reading touched differs.
	maxSnapshotBytes = 8 << 20
)

// snapshots are the states a module's instances start from: for each
// random key (Limits.Random) seen, one, or one per wall-clock reading.
type snapshots struct {
	globals []string // export names of the mutable globals, in index order
	start   *atStart // the memory at instantiation
	mu      sync.Mutex
	// keys holds what is known for each random key, at most
	// maxRandomKeysPerModule of them; an instance under a key not
	// among them once they are full runs `_initialize` and is not watched.
	keys    map[uint64]*keySnapshots
	first   *snapshot    // the first kept, under any key
	bytes   int          // held by the snapshots, of every key
	started atomic.Int64 // instances started from one
}

// keySnapshots are a module's snapshots for one random key: instances
// under another key read other random bytes in `_initialize`, and end it
// in another state.
type keySnapshots struct {
	watched bool // an `_initialize` has been watched
	// watching is closed when the `_initialize` being watched ends; nil
	// when none is. Until the first ends, other instances wait for it
	// rather than run their own: with a test on each core, every core
	// would otherwise run `_initialize` for the same snapshot.
	watching chan struct{}
	wall     bool                // it read the wall clock: byClock, not any
	any      *snapshot           // for every instance; nil: none
	byClock  map[int64]*snapshot // nil: `_initialize` did something else there
}

// snapshot is a module's state right after an instance started.
type snapshot struct {
	size    uint32   // memory size in bytes
	chunks  [][]byte // chunkBytes each; nil: as at instantiation
	globals []uint64
	steps   int64       // taken by `_initialize`
	output  []initWrite // written by `_initialize`, in order
	random  int64       // random bytes read by `_initialize`
}

type initWrite struct {
	stderr bool
	p      []byte
}

// initRecord watches an instance's `_initialize` for anything that would
// make its result differ from one instance to the next.
type initRecord struct {
	clock  int64 // the reading the instance started at, in ns
	wall   bool  // read the wall clock
	unfit  bool  // saw the clock move, or called the host
	output []initWrite
	bytes  int
	random *randomStream
	key    uint64 // Limits.Random
}

func (r *initRecord) write(stderr bool, p []byte) {
	r.bytes += len(p)
	if r.bytes > maxInitOutputBytes {
		r.unfit = true
		return
	}
	r.output = append(r.output, initWrite{stderr, append([]byte(nil), p...)})
}

// lookup returns the snapshot for an instance under random key key
// starting at a clock reading, and whether its `_initialize` is worth
// watching (nothing known yet, and room to keep it). A caller told to
// watch must call settle when that instance's `_initialize` has ended,
// kept or not.
func (s *snapshots) lookup(ctx context.Context, key uint64, clock int64) (*snapshot, bool) {
	s.mu.Lock()
	k := s.keys[key]
	if k == nil {
		if len(s.keys) >= maxRandomKeysPerModule {
			s.mu.Unlock()
			return nil, false // no room for another key: it runs `_initialize`
		}
		if s.keys == nil {
			s.keys = map[uint64]*keySnapshots{}
		}
		k = &keySnapshots{}
		s.keys[key] = k
	}
	for !k.wall && !k.watched && k.watching != nil {
		w := k.watching
		s.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return nil, false // it starts the old way, and stops as it would
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if !k.wall {
		if !k.watched {
			k.watching = make(chan struct{})
			return nil, true
		}
		return k.any, false
	}
	snap, known := k.byClock[clock]
	return snap, !known && len(k.byClock) < maxSnapshotsPerModule
}

// settle ends the watch lookup asked for under key: the instances waiting
// for it look again, and find a snapshot, or that there is none, or (when
// this one failed before it could be kept) that one of them is to watch.
func (s *snapshots) settle(key uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.keys[key]; k != nil && k.watching != nil {
		close(k.watching)
		k.watching = nil
	}
}

// keep takes the state of mod, just started by inst, as the snapshot for
// rec's random key and clock reading (or notes that there is none).
func (s *snapshots) keep(rec *initRecord, inst *Instance, mod api.Module) {
	if rec.unfit {
		s.mu.Lock()
		s.note(s.keys[rec.key], rec, nil)
		s.mu.Unlock()
		return
	}
	snap := &snapshot{steps: inst.steps, output: rec.output, random: rec.random.read}
	for _, name := range s.globals {
		g := mod.ExportedGlobal(name)
		if g == nil {
			return
		}
		snap.globals = append(snap.globals, g.Get())
	}
	mem := mod.Memory()
	buf, ok := mem.Read(0, mem.Size())
	if !ok {
		return
	}
	s.mu.Lock()
	first := s.first
	s.mu.Unlock()
	snap.size = uint32(len(buf))
	snap.chunks = make([][]byte, (len(buf)+chunkBytes-1)/chunkBytes)
	held := 0
	for i := range snap.chunks {
		c := buf[i*chunkBytes : min((i+1)*chunkBytes, len(buf))]
		switch {
		case s.start.holds(uint32(i*chunkBytes), c):
			// as at instantiation: most of the data, which the runtime
			// reads and never writes, is copied once, not twice
		case first != nil && i < len(first.chunks) && first.chunks[i] != nil && bytes.Equal(first.chunks[i], c):
			snap.chunks[i] = first.chunks[i]
		case isZero(c):
			snap.chunks[i] = zeroChunk[:len(c)]
		default:
			snap.chunks[i] = append([]byte(nil), c...)
			held += len(c)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+held > maxSnapshotBytes {
		snap = nil // too big: start these the old way
	}
	if s.note(s.keys[rec.key], rec, snap) && snap != nil {
		s.bytes += held
		if s.first == nil {
			s.first = snap
		}
	}
}

// note records in k, the snapshots of rec's random key, what rec's
// `_initialize` left, snap or nothing, for the instances it stands for;
// false if that was known already (another instance got there first) or
// there is no room. s.mu is held.
func (s *snapshots) note(k *keySnapshots, rec *initRecord, snap *snapshot) bool {
	k.watched = true
	if !rec.wall && !k.wall {
		if k.any != nil {
			return false
		}
		k.any = snap
		return true
	}
	// What the clock read decides the start: one per reading.
	k.wall, k.any = true, nil
	if k.byClock == nil {
		k.byClock = map[int64]*snapshot{}
	}
	if _, known := k.byClock[rec.clock]; known || len(k.byClock) >= maxSnapshotsPerModule {
		return false
	}
	k.byClock[rec.clock] = snap
	return true
}

// fits says whether an instance under lim would have finished
// `_initialize` as the snapshot's did: within its step budgets and output
// limit.
func (snap *snapshot) fits(lim Limits) bool {
	if lim.CallSteps > 0 && snap.steps > lim.CallSteps {
		return false
	}
	if b := lim.Steps; b != nil && snap.steps > b.Max-b.used {
		return false
	}
	if lim.MaxOutputBytes > 0 {
		n := 0
		for _, w := range snap.output {
			n += len(w.p)
		}
		if int64(n) > lim.MaxOutputBytes {
			return false
		}
	}
	return true
}

// restore sets mod, instantiated without a start function, to the
// snapshot's state and charges inst what `_initialize` cost.
func (snap *snapshot) restore(s *snapshots, inst *Instance, mod api.Module) bool {
	mem := mod.Memory()
	if size := mem.Size(); size < snap.size {
		if _, ok := mem.Grow((snap.size - size) >> 16); !ok {
			return false
		}
	}
	buf, ok := mem.Read(0, snap.size)
	if !ok || mem.Size() != snap.size {
		return false
	}
	for i, c := range snap.chunks {
		if c != nil {
			copy(buf[i*chunkBytes:], c)
		}
	}
	for i, name := range s.globals {
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return false
		}
		g.Set(snap.globals[i])
	}
	inst.steps = snap.steps
	if b := inst.limits.Steps; b != nil {
		b.used += snap.steps
	}
	for _, w := range snap.output {
		inst.stream(w.stderr).Write(w.p)
	}
	s.started.Add(1)
	return true
}

var zeroChunk [chunkBytes]byte

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// wasmSection is where a section of a module is: its id byte, its body,
// its end.
type wasmSection struct{ start, body, end int }

// sectionsOf finds m's sections by id (the last, for custom sections);
// false when m is not a module or a section runs past its end.
func sectionsOf(m []byte) (secs [13]*wasmSection, ok bool) {
	if len(m) < 8 || string(m[:4]) != "\x00asm" {
		return secs, false
	}
	for i := 8; i < len(m); {
		id := m[i]
		size, n := uleb32(m[i+1:])
		if n == 0 || i+1+n+int(size) > len(m) {
			return secs, false
		}
		s := &wasmSection{i, i + 1 + n, i + 1 + n + int(size)}
		if int(id) < len(secs) {
			secs[id] = s
		}
		i = s.end
	}
	return secs, true
}

// exportEdit is the edit that exports every mutable global m defines as
// globalExportPrefix+index, with those names; or nil when m is not of
// the plain shape this knows (no imported globals, constant
// initialisers, an export section). Whether a copy of m's memory can
// stand for its start is memoryAtStart's to say.
func exportEdit(m []byte) (*sectionEdit, []string) {
	secs, ok := sectionsOf(m)
	if !ok {
		return nil, nil
	}
	imports, globals, exports := secs[2], secs[6], secs[7]
	if globals == nil || exports == nil || importsGlobal(m, imports) {
		return nil, nil
	}
	body := m[globals.body:globals.end]
	count, k := uleb32(body)
	if k == 0 {
		return nil, nil
	}
	var names []string
	var entries []byte
	for idx := range count {
		if k+2 > len(body) {
			return nil, nil
		}
		mutable := body[k+1] == 1
		k += 2
		n := constExprLen(body[k:])
		if n == 0 {
			return nil, nil
		}
		k += n
		if mutable {
			name := globalExportPrefix + strconv.Itoa(int(idx))
			names = append(names, name)
			entries = appendUleb(entries, uint32(len(name)))
			entries = append(entries, name...)
			entries = append(entries, 3) // a global
			entries = appendUleb(entries, idx)
		}
	}
	if k != len(body) || len(names) == 0 {
		return nil, nil
	}
	ebody := m[exports.body:exports.end]
	ecount, k := uleb32(ebody)
	if k == 0 {
		return nil, nil
	}
	return &sectionEdit{at: *exports, size: 5 + len(ebody) + len(entries), write: func(out []byte) []byte {
		out = appendUleb(out, ecount+uint32(len(names)))
		out = append(out, ebody[k:]...)
		return append(out, entries...)
	}}, names
}

// importsGlobal says whether the import section imports a global (which
// would shift the index space), or cannot be read.
func importsGlobal(m []byte, s *wasmSection) bool {
	if s == nil {
		return false
	}
	b := m[s.body:s.end]
	count, k := uleb32(b)
	if k == 0 {
		return true
	}
	name := func() bool {
		n, w := uleb32(b[k:])
		if w == 0 || k+w+int(n) > len(b) {
			return false
		}
		k += w + int(n)
		return true
	}
	limits := func() bool {
		if k >= len(b) {
			return false
		}
		flag := b[k]
		k++
		for range 1 + int(flag&1) {
			_, w := uleb32(b[k:])
			if w == 0 {
				return false
			}
			k += w
		}
		return true
	}
	for range count {
		if !name() || !name() || k >= len(b) {
			return true
		}
		kind := b[k]
		k++
		switch kind {
		case 0: // function: a type index
			_, w := uleb32(b[k:])
			if w == 0 {
				return true
			}
			k += w
		case 1: // table: a reference type and limits
			k++
			if !limits() {
				return true
			}
		case 2: // memory
			if !limits() {
				return true
			}
		default: // a global, or something newer
			return true
		}
	}
	return k != len(b)
}

// constExprLen is the length of a constant initialiser (one constant, then
// end), or 0.
func constExprLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := 0
	switch b[0] {
	case 0x41: // i32.const
		_, n = sleb32(b[1:])
	case 0x42: // i64.const
		n = sleb64Len(b[1:])
	case 0x43: // f32.const
		n = 4
	case 0x44: // f64.const
		n = 8
	default:
		return 0
	}
	if n == 0 || 1+n >= len(b) || b[1+n] != 0x0b {
		return 0
	}
	return n + 2
}

func sleb64Len(b []byte) int {
	for i := 0; i < len(b) && i < 10; i++ {
		if b[i]&0x80 == 0 {
			return i + 1
		}
	}
	return 0
}
