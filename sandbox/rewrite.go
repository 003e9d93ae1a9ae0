package sandbox

import "slices"

// A module is rewritten before wazero compiles it (its data segments
// merged, its mutable globals exported, most of the library pruned, its
// name section dropped), each pass replacing one section. Each pass used
// to copy the whole module: 2.8 MB for 171, four times a submission,
// nearly all of it fresh memory. The passes now say what their section
// becomes, and rewrite writes the module once.

// sectionEdit replaces the section at, or drops it (write nil).
type sectionEdit struct {
	at wasmSection
	// write appends the section's new body to out: at most size bytes.
	write func(out []byte) []byte
	size  int
}

// rewrite returns m with the edits applied, in one copy: nil edits are
// skipped; the others must not overlap.
func rewrite(m []byte, edits ...*sectionEdit) []byte {
	edits = slices.DeleteFunc(slices.Clone(edits), func(e *sectionEdit) bool { return e == nil })
	slices.SortFunc(edits, func(a, b *sectionEdit) int { return a.at.start - b.at.start })
	n := len(m)
	for _, e := range edits {
		n -= e.at.end - e.at.start
		if e.write != nil {
			n += 1 + 5 + e.size
		}
	}
	out := make([]byte, 0, n)
	prev := 0
	for _, e := range edits {
		out = append(out, m[prev:e.at.start]...)
		prev = e.at.end
		if e.write == nil {
			continue
		}
		out = append(out, m[e.at.start]) // the section's id
		// The size goes in five bytes, as Go's linker writes it, so that
		// the body can be written in place and the size after it.
		at := len(out)
		out = append(out, 0x80, 0x80, 0x80, 0x80, 0)
		out = e.write(out)
		putUleb5(out[at:], uint32(len(out)-at-5))
	}
	return append(out, m[prev:]...)
}

// putUleb5 writes v into b[:5] as an unsigned LEB128 padded to five bytes.
func putUleb5(b []byte, v uint32) {
	for i := range 4 {
		b[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	b[4] = byte(v)
}
