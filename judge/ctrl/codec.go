package ctrl

import (
	"errors"
	"sort"
	"time"
)

// The wire codec: a compact, hand-written binary format (lengths and
// numbers in one byte when small, length-prefixed strings, map keys sorted)
// shared by the learner's module and the judge. The decoder never panics
// and never allocates more than the input can justify, since the judge
// decodes bytes a learner's code wrote.
//
// A length (of a string, a slice, a map) under 0xFF is that one byte; a
// longer one is 0xFF and three bytes, little-endian. A number (an int32
// field, a generation, a time) under 0xFF is that one byte, else 0xFF and
// eight bytes; signed numbers are zigzag-coded first, so small negative
// ones stay one byte. An object's kind is one byte (wireKind). No varints:
// a varint's loop kept str and count from being inlined, and in the
// interpreter a call costs more than reading a string
// (judge/RATIONALE.md, "Why a wire format the decoder can inline?").

var errMalformed = errors.New("malformed message")

// maxLength is the longest length three bytes hold. No message sent comes
// near it: a module's request past its limit (MaxObjectBytes for a write)
// is measured, not built, and replaced by an OpTooLarge, and the judge's
// replies stop at 3.5 MiB. A longer string is cut to it all the same, so
// that what is encoded always decodes.
const maxLength = 1<<24 - 1

type encoder struct {
	b []byte
	// limit, when above 0, is a message size past which strings are
	// counted in skipped instead of copied: the size of an oversized
	// request is known without building it.
	limit, skipped int
}

func (e *encoder) length(n int) {
	if n < 0xFF {
		e.b = append(e.b, byte(n))
		return
	}
	n = min(n, maxLength)
	e.b = append(e.b, 0xFF, byte(n), byte(n>>8), byte(n>>16))
}

func (e *encoder) uint64(v uint64) {
	if v < 0xFF {
		e.b = append(e.b, byte(v))
		return
	}
	e.b = append(e.b, 0xFF, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func (e *encoder) int64(v int64) { e.uint64(uint64(v<<1) ^ uint64(v>>63)) }

func (e *encoder) str(s string) {
	e.length(len(s))
	if e.limit > 0 && len(e.b)+e.skipped+len(s) > e.limit {
		e.skipped += len(s) // the size as it would be, for OpTooLarge
		return
	}
	e.b = append(e.b, s[:min(len(s), maxLength)]...)
}

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) strMap(m map[string]string) {
	if m == nil {
		e.length(0)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.length(len(keys) + 1) // 0 means nil, 1 means empty
	for _, k := range keys {
		e.str(k)
		e.str(m[k])
	}
}

func (e *encoder) strs(s []string) {
	e.length(len(s))
	for _, x := range s {
		e.str(x)
	}
}

func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.int64(0)
		return
	}
	e.int64(t.UnixNano())
}

// decoder reads a message from a string, and every string decoded from
// it is a piece of that string, not an allocation of its own (a Pod is a
// dozen strings, and allocating is most of what decoding costs in the
// learner's module). In the module the message is where the judge wrote
// the reply (roundTrip), so it is not even copied.
type decoder struct {
	b   string
	err error
	// The small slices of an object (containers, owner references,
	// conditions) are cut from its slab, and the slabs of a List's objects
	// are one allocation (slabs, sized for the items still to come: left).
	left  int
	slabs []objectSlab
	slab  *objectSlab // the object's being decoded; nil until it needs one
}

// objectSlab, generated (kinds_codec_gen.go), has one slot per such slice
// of the kinds.

// objectSlab returns the slab of the object being decoded.
func (d *decoder) objectSlab() *objectSlab {
	if d.slab == nil {
		if len(d.slabs) == 0 {
			d.slabs = make([]objectSlab, max(d.left, 1))
		}
		d.slab, d.slabs = &d.slabs[0], d.slabs[1:]
	}
	return d.slab
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errMalformed
	}
	d.b = ""
}

// str and count are most of what decoding does, and a call is dozens of
// instructions in the interpreter the learner's module runs in: both are
// written to be inlined (no calls, within the compiler's budget; checked
// by TestDecoderInlines). So a failure sets err and leaves b as it is,
// rather than calling fail; what follows reads garbage, bounded, and is
// thrown away with the message.

// str reads a string: a length, then that many bytes.
func (d *decoder) str() string {
	if b := d.b; len(b) > 0 {
		n := int(b[0])
		if b = b[1:]; n == 0xFF && len(b) > 2 {
			n, b = int(b[0])|int(b[1])<<8|int(b[2])<<16, b[3:]
		}
		if n <= len(b) {
			d.b = b[n:]
			return b[:n]
		}
	}
	d.err = errMalformed
	return ""
}

// count reads the length of what follows, and checks it against the
// bytes left: each element takes at least one.
func (d *decoder) count() int {
	if b := d.b; len(b) > 0 {
		n := int(b[0])
		if b = b[1:]; n == 0xFF && len(b) > 2 {
			n, b = int(b[0])|int(b[1])<<8|int(b[2])<<16, b[3:]
		}
		if n <= len(b) {
			d.b = b
			return n
		}
	}
	d.err = errMalformed
	return 0
}

func (d *decoder) uint64() uint64 {
	b := d.b
	if len(b) > 0 && b[0] < 0xFF {
		d.b = b[1:]
		return uint64(b[0])
	}
	if len(b) < 9 {
		d.fail()
		return 0
	}
	d.b = b[9:]
	return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16 | uint64(b[4])<<24 |
		uint64(b[5])<<32 | uint64(b[6])<<40 | uint64(b[7])<<48 | uint64(b[8])<<56
}

func (d *decoder) int64() int64 {
	u := d.uint64()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) int32() int32 {
	if b := d.b; len(b) > 0 && b[0] < 0xFF { // the usual case, without a call
		d.b = b[1:]
		return int32(b[0]>>1) ^ -int32(b[0]&1)
	}
	v := d.int64()
	if v != int64(int32(v)) {
		d.fail()
		return 0
	}
	return int32(v)
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	c := d.b[0]
	d.b = d.b[1:]
	if c > 1 {
		d.fail()
	}
	return c == 1
}

// length reads a length as count does, but leaves checking it to the
// caller: a map's is one more than its entries, so that 0 can mean nil.
func (d *decoder) length() int {
	b := d.b
	if len(b) > 0 && b[0] < 0xFF {
		d.b = b[1:]
		return int(b[0])
	}
	if len(b) < 4 {
		d.fail()
		return 0
	}
	d.b = b[4:]
	return int(b[1]) | int(b[2])<<8 | int(b[3])<<16
}

func (d *decoder) strMap() map[string]string {
	n := d.length()
	if n == 0 {
		return nil
	}
	n-- // the entries, two strings each
	if n > len(d.b)/2 {
		d.fail()
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.str()
	}
	return m
}

func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	s := make([]string, n)
	for i := range s {
		s[i] = d.str()
	}
	return s
}

func (d *decoder) time() time.Time {
	n := d.int64()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// The per-kind code (wireKind, object and object, the body methods, and
// encodeBody and decodeBody for each kind) is generated from the
// declarations in types.go: kinds_codec_gen.go.

// into decodes an object of o's own kind into o, cleared first. It
// reports false, having read nothing, when the message holds another kind.
func (d *decoder) into(o Object) bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	if k := wireKind(o); k == 0 || d.b[0] != k {
		return false
	}
	d.b = d.b[1:]
	o.reset()
	d.objectMeta(o.GetObjectMeta())
	d.body(o)
	return true
}

// decodeItems decodes n objects of T's kind, or reports false at the
// first of another kind.
func decodeItems[T any, P interface {
	*T
	Object
}](d *decoder, n int) ([]T, bool) {
	items := make([]T, n)
	for i := range items {
		d.left = n - i
		if !d.into(P(&items[i])) {
			return nil, d.err != nil
		}
	}
	return items, true
}

// AppendObject appends the wire form of obj to b. The judge uses it; a
// learner has no need to.
func AppendObject(b []byte, obj Object) []byte {
	e := encoder{b: b}
	e.object(obj)
	return e.b
}

// DecodeObject decodes one object written by AppendObject.
func DecodeObject(b []byte) (Object, error) {
	d := decoder{b: string(b)}
	o := d.object()
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return o, nil
}
