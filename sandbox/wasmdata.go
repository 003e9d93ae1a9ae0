package sandbox

import (
	"bytes"
	"cmp"
	"slices"
	"sort"
)

// Go's wasm linker cuts the data section at every run of eight or more
// zero bytes: 171's module has 28,498 data segments for 0.7 MB of data.
// wazero evaluates, records and copies each one at every instantiation,
// and a submission makes dozens of instances (a test, a restart, a shrink
// trial each): a fifth of a submission's CPU time went there. Segments a
// few bytes apart are merged, the gaps filled with the zeros the memory
// holds anyway, which leaves what the memory holds when the module starts
// unchanged. Measured: RATIONALE.md, "Why merge the data segments?".

// maxDataGap is the largest run of zeros merged into a segment.
const maxDataGap = 4096

type dataSegment struct {
	off  uint32
	init []byte
}

// atStart is a module's memory at instantiation: zero but for its active
// data segments.
type atStart struct {
	sec  *wasmSection  // the data section; nil: none
	segs []dataSegment // by offset, none overlapping
	end  uint32        // where the last ends
}

// memoryAtStart reads m's data section, or says nil when m is not the
// plain shape merging segments and copying memory are known to be
// invisible in: every segment active in memory 0 at a constant offset,
// none overlapping (the later would win), and no data count section
// (which memory.init and data.drop, the only instructions that name a
// segment, require, and whose state in wazero a copy of memory would not
// restore).
func memoryAtStart(m []byte) *atStart {
	if len(m) < 8 || string(m[:4]) != "\x00asm" {
		return nil
	}
	var sec *wasmSection
	for i := 8; i < len(m); {
		id := m[i]
		size, n := uleb32(m[i+1:])
		if n == 0 || i+1+n+int(size) > len(m) {
			return nil
		}
		switch id {
		case 12: // data count
			return nil
		case 11:
			sec = &wasmSection{i, i + 1 + n, i + 1 + n + int(size)}
		}
		i += 1 + n + int(size)
	}
	if sec == nil {
		return &atStart{}
	}
	segs, ok := parseData(m[sec.body:sec.end])
	if !ok {
		return nil
	}
	slices.SortStableFunc(segs, func(a, b dataSegment) int { return cmp.Compare(a.off, b.off) })
	var end uint64
	for _, sg := range segs {
		if uint64(sg.off) < end {
			return nil
		}
		end = uint64(sg.off) + uint64(len(sg.init))
	}
	if end > 1<<32-1 {
		return nil
	}
	return &atStart{sec, segs, uint32(end)}
}

// mergeEdit is the edit that merges the data segments, or nil when there
// are fewer than two.
func (a *atStart) mergeEdit() *sectionEdit {
	segs := a.segs
	if len(segs) < 2 {
		return nil
	}
	// Runs of segments to merge, each [first, last] in segs with its size
	// once merged.
	type run struct{ first, last, size int }
	var runs []run
	for i, s := range segs {
		if len(runs) > 0 {
			r := &runs[len(runs)-1]
			lastEnd := uint64(segs[r.first].off) + uint64(r.size)
			if uint64(s.off)-lastEnd <= maxDataGap {
				r.last, r.size = i, int(uint64(s.off)-uint64(segs[r.first].off))+len(s.init)
				continue
			}
		}
		runs = append(runs, run{i, i, len(s.init)})
	}
	size := 5
	for _, r := range runs {
		size += 2 + 5 + 1 + 5 + r.size
	}
	return &sectionEdit{at: *a.sec, size: size, write: func(out []byte) []byte {
		out = appendUleb(out, uint32(len(runs)))
		for _, r := range runs {
			base := segs[r.first].off
			out = append(out, 0, 0x41)
			out = appendSleb(out, int32(base))
			out = append(out, 0x0b)
			out = appendUleb(out, uint32(r.size))
			at := len(out) // where offset base lands
			for _, s := range segs[r.first : r.last+1] {
				out = append(out, zeros[:at+int(s.off-base)-len(out)]...)
				out = append(out, s.init...)
			}
		}
		return out
	}}
}

// holds says whether the memory at instantiation holds b at off.
func (a *atStart) holds(off uint32, b []byte) bool {
	if off >= a.end {
		return isZero(b)
	}
	end := uint64(off) + uint64(len(b))
	i := sort.Search(len(a.segs), func(i int) bool {
		return uint64(a.segs[i].off)+uint64(len(a.segs[i].init)) > uint64(off)
	})
	at := uint64(off) // b up to at is checked
	for _, sg := range a.segs[i:] {
		lo, hi := uint64(sg.off), uint64(sg.off)+uint64(len(sg.init))
		if lo >= end {
			break
		}
		if lo > at {
			if !isZero(b[at-uint64(off) : lo-uint64(off)]) {
				return false
			}
			at = lo
		}
		hi = min(hi, end)
		if !bytes.Equal(b[at-uint64(off):hi-uint64(off)], sg.init[at-lo:hi-lo]) {
			return false
		}
		at = hi
	}
	return isZero(b[at-uint64(off):])
}

// zeros fills the gaps between merged segments.
var zeros [maxDataGap]byte

func uleb32(b []byte) (uint32, int) {
	var v uint32
	for i := 0; i < len(b) && i < 5; i++ {
		v |= uint32(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

func sleb32(b []byte) (int32, int) {
	var v int64
	for i := 0; i < len(b) && i < 5; i++ {
		v |= int64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if b[i]&0x40 != 0 {
				v -= 1 << (7 * (i + 1))
			}
			return int32(v), i + 1
		}
	}
	return 0, 0
}

func appendUleb(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSleb(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// parseData reads a data section's body, or says false when a segment is
// not active in memory 0 at a constant offset.
func parseData(body []byte) ([]dataSegment, bool) {
	count, k := uleb32(body)
	if k == 0 {
		return nil, false
	}
	segs := make([]dataSegment, 0, min(count, uint32(len(body))))
	for range count {
		// flags 0: active, memory 0; then i32.const N, end; then the bytes.
		if k >= len(body) || body[k] != 0 || k+1 >= len(body) || body[k+1] != 0x41 {
			return nil, false
		}
		off, n := sleb32(body[k+2:])
		k += 2 + n
		if n == 0 || off < 0 || k >= len(body) || body[k] != 0x0b {
			return nil, false
		}
		size, n := uleb32(body[k+1:])
		k += 1 + n
		if n == 0 || k+int(size) > len(body) {
			return nil, false
		}
		segs = append(segs, dataSegment{uint32(off), body[k : k+int(size)]})
		k += int(size)
	}
	return segs, k == len(body)
}
