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

// objectSlab holds the small slices of an object (of its metadata and
// what follows it) when each has one element, as the judge's objects do:
// one allocation instead of three. Each is capped at its length, so that
// an append to one never writes into another.
type objectSlab struct {
	containers [1]Container
	owners     [1]OwnerReference
	conditions [1]PodCondition
}

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

func (e *encoder) meta(m *ObjectMeta) {
	e.str(m.Name)
	e.str(m.GenerateName)
	e.str(m.Namespace)
	e.str(m.UID)
	e.str(m.ResourceVersion)
	e.int64(m.Generation)
	e.time(m.CreationTimestamp)
	e.bool(m.DeletionTimestamp != nil)
	if m.DeletionTimestamp != nil {
		e.time(*m.DeletionTimestamp)
	}
	e.strMap(m.Labels)
	e.strMap(m.Annotations)
	e.length(len(m.OwnerReferences))
	for _, r := range m.OwnerReferences {
		e.str(r.APIVersion)
		e.str(r.Kind)
		e.str(r.Name)
		e.str(r.UID)
		e.bool(r.Controller)
		e.bool(r.BlockOwnerDeletion)
	}
	e.strs(m.Finalizers)
}

func (d *decoder) meta(m *ObjectMeta) {
	d.slab = nil // a new object, or a Deployment's template: a slab of its own
	m.Name = d.str()
	m.GenerateName = d.str()
	m.Namespace = d.str()
	m.UID = d.str()
	m.ResourceVersion = d.str()
	m.Generation = d.int64()
	m.CreationTimestamp = d.time()
	if d.bool() {
		t := d.time()
		m.DeletionTimestamp = &t
	}
	m.Labels = d.strMap()
	m.Annotations = d.strMap()
	if n := d.count(); n > 0 {
		if n == 1 {
			m.OwnerReferences = d.objectSlab().owners[:]
		} else {
			m.OwnerReferences = make([]OwnerReference, n)
		}
		for i := range m.OwnerReferences {
			r := &m.OwnerReferences[i]
			r.APIVersion, r.Kind, r.Name, r.UID = d.str(), d.str(), d.str(), d.str()
			r.Controller, r.BlockOwnerDeletion = d.bool(), d.bool()
		}
	}
	m.Finalizers = d.strs()
}

func (e *encoder) podSpec(s *PodSpec) {
	e.length(len(s.Containers))
	for _, c := range s.Containers {
		e.str(c.Name)
		e.str(c.Image)
	}
	e.str(s.NodeName)
}

func (d *decoder) podSpec(s *PodSpec) {
	if n := d.count(); n > 0 {
		if n == 1 {
			s.Containers = d.objectSlab().containers[:]
		} else {
			s.Containers = make([]Container, n)
		}
		for i := range s.Containers {
			s.Containers[i].Name, s.Containers[i].Image = d.str(), d.str()
		}
	}
	s.NodeName = d.str()
}

func (o *Deployment) encodeBody(e *encoder) {
	s := &o.Spec
	e.int64(int64(s.Replicas))
	e.strMap(s.Selector.MatchLabels)
	e.meta(&s.Template.ObjectMeta)
	e.podSpec(&s.Template.Spec)
	e.str(s.Strategy.Type)
	e.int64(int64(s.Strategy.RollingUpdate.MaxSurge))
	e.int64(int64(s.Strategy.RollingUpdate.MaxUnavailable))
	st := &o.Status
	e.int64(st.ObservedGeneration)
	e.int64(int64(st.Replicas))
	e.int64(int64(st.UpdatedReplicas))
	e.int64(int64(st.ReadyReplicas))
	e.int64(int64(st.AvailableReplicas))
}

func (o *Deployment) decodeBody(d *decoder) {
	s := &o.Spec
	s.Replicas = d.int32()
	s.Selector.MatchLabels = d.strMap()
	d.meta(&s.Template.ObjectMeta)
	d.podSpec(&s.Template.Spec)
	s.Strategy.Type = d.str()
	s.Strategy.RollingUpdate.MaxSurge = d.int32()
	s.Strategy.RollingUpdate.MaxUnavailable = d.int32()
	st := &o.Status
	st.ObservedGeneration = d.int64()
	st.Replicas = d.int32()
	st.UpdatedReplicas = d.int32()
	st.ReadyReplicas = d.int32()
	st.AvailableReplicas = d.int32()
}

func (o *Pod) encodeBody(e *encoder) {
	e.podSpec(&o.Spec)
	e.str(string(o.Status.Phase))
	e.length(len(o.Status.Conditions))
	for _, c := range o.Status.Conditions {
		e.str(string(c.Type))
		e.str(string(c.Status))
	}
}

func (o *Pod) decodeBody(d *decoder) {
	d.podSpec(&o.Spec)
	o.Status.Phase = PodPhase(d.str())
	if n := d.count(); n > 0 {
		if n == 1 {
			o.Status.Conditions = d.objectSlab().conditions[:]
		} else {
			o.Status.Conditions = make([]PodCondition, n)
		}
		for i := range o.Status.Conditions {
			c := &o.Status.Conditions[i]
			c.Type, c.Status = PodConditionType(d.str()), ConditionStatus(d.str())
		}
	}
}

func (o *ConfigMap) encodeBody(e *encoder) { e.strMap(o.Data) }
func (o *ConfigMap) decodeBody(d *decoder) { o.Data = d.strMap() }

// An object's kind is one byte on the wire, not its name: the decoder
// then checks it without reading and comparing a string.
const (
	wireDeployment = 1 + iota
	wirePod
	wireConfigMap
)

// wireKind is o's kind on the wire; 0 for a kind that has none.
func wireKind(o Object) byte {
	switch o.(type) {
	case *Deployment:
		return wireDeployment
	case *Pod:
		return wirePod
	case *ConfigMap:
		return wireConfigMap
	}
	return 0
}

func (e *encoder) object(o Object) {
	e.b = append(e.b, wireKind(o))
	e.meta(o.GetObjectMeta())
	switch o := o.(type) { // not a method: the encoder would escape
	case *Deployment:
		o.encodeBody(e)
	case *Pod:
		o.encodeBody(e)
	case *ConfigMap:
		o.encodeBody(e)
	}
}

// body decodes the rest of o after its metadata. A type switch, not a
// method of Object: the decoder passed through an interface call would
// escape, and cost an allocation in every reply.
func (d *decoder) body(o Object) {
	switch o := o.(type) {
	case *Deployment:
		o.decodeBody(d)
	case *Pod:
		o.decodeBody(d)
	case *ConfigMap:
		o.decodeBody(d)
	}
}

func (d *decoder) object() Object {
	var o Object
	if len(d.b) > 0 {
		switch d.b[0] {
		case wireDeployment:
			o = &Deployment{}
		case wirePod:
			o = &Pod{}
		case wireConfigMap:
			o = &ConfigMap{}
		}
	}
	if o == nil {
		d.fail()
		return nil
	}
	d.b = d.b[1:]
	d.meta(o.GetObjectMeta())
	d.body(o)
	if d.err != nil {
		return nil
	}
	return o
}

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
	d.meta(o.GetObjectMeta())
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
