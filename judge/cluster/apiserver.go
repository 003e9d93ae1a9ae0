package cluster

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
)

// APIServer is the simulated API server: the source of truth. It follows
// the Kubernetes API conventions the exercises rely on: a new UID per
// object, a resourceVersion bumped on every write, generation bumped on
// spec changes, optimistic concurrency (409 Conflict on a stale
// resourceVersion), AlreadyExists, NotFound, generateName, a status
// subresource, finalizers with deletionTimestamp, and owner references
// whose dependents the garbage collector deletes in the background.
type APIServer struct {
	Objs  map[string]ctrl.Object // by objKey
	size  map[string]int         // each stored object's encoded size, by objKey
	bytes int                    // the sum of size
	rv    int64
	uids  int
	rng   *rand.Rand
	now   func() time.Time
	Watch func(ev WatchEvent) // called on every change
	// By names who is writing; owners is what others set (ownership.go).
	By     func() string
	Owners map[string]map[MetaKey]string // by UID
}

type EventType string

const (
	EvAdded    EventType = "ADDED"
	EvModified EventType = "MODIFIED"
	EvDeleted  EventType = "DELETED"
)

type WatchEvent struct {
	Type   EventType
	Object ctrl.Object // a copy; for DELETED the last state
}

func objKey(k ctrl.Kind, ns, name string) string { return string(k) + "/" + ns + "/" + name }

func KeyOf(o ctrl.Object) string {
	m := o.GetObjectMeta()
	return objKey(o.GetObjectKind(), m.Namespace, m.Name)
}

func NewAPIServer(rng *rand.Rand, now func() time.Time) *APIServer {
	return &APIServer{Objs: map[string]ctrl.Object{}, size: map[string]int{}, rng: rng, now: now, Watch: func(WatchEvent) {},
		By: func() string { return "" }, Owners: map[string]map[MetaKey]string{}}
}

// Now is the cluster's time, as the server stamps it: what a model that
// checks deadlines at rest reads (family.Clocked).
func (a *APIServer) Now() time.Time { return a.now() }

// What the simulated API server refuses, as a real one would (see
// judge/RATIONALE.md, "Why these bounds?"). The limits on objects keep a
// test's memory small whatever the controller writes.
const (
	// maxObjectBytes is the largest object stored, encoded: etcd's
	// default request limit (--max-request-bytes, 1.5 MiB).
	maxObjectBytes = ctrl.MaxObjectBytes
	// maxAnnotationBytes is Kubernetes' limit on an object's annotations,
	// keys and values together.
	maxAnnotationBytes = 256 << 10
	// maxObjects and maxStoredBytes are the quota of one test's cluster:
	// live objects, and their encoded bytes together.
	maxObjects     = 1000
	maxStoredBytes = 3 << 20
	// maxGeneratedBase is how much of a generateName Kubernetes keeps, so
	// the name with its 5-letter suffix fits a 63-character label.
	maxGeneratedBase = 58
)

func APIErr(code int32, reason, msg string) *ctrl.StatusError {
	return &ctrl.StatusError{Code: code, Reason: reason, Message: msg}
}

func notFound(k ctrl.Kind, name string) *ctrl.StatusError {
	return APIErr(404, ctrl.ReasonNotFound, ObjRef(k, name)+" not found")
}

// ObjRef is how an error names an object: ConfigMap "name".
func ObjRef(k ctrl.Kind, name string) string {
	return text.Shown(string(k)) + " \"" + text.Shown(name) + "\""
}

func invalid(k ctrl.Kind, name, field, why string) *ctrl.StatusError {
	return APIErr(422, ctrl.ReasonInvalid, ObjRef(k, name)+" is invalid: "+field+": "+why)
}

func (s *APIServer) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789" // as Kubernetes: no vowels, no look-alikes

func (s *APIServer) suffix() string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = suffixAlphabet[s.rng.IntN(len(suffixAlphabet))]
	}
	return string(b)
}

func (s *APIServer) newUID() string {
	s.uids++
	return "uid-" + strconv.Itoa(s.uids)
}

// Get returns a copy of the stored object, or nil.
func (s *APIServer) Get(k ctrl.Kind, ns, name string) ctrl.Object {
	o := s.Objs[objKey(k, ns, name)]
	if o == nil {
		return nil
	}
	return ctrl.DeepCopy(o)
}

// List returns copies of every object of kind k, sorted by namespace and name.
func (s *APIServer) List(k ctrl.Kind) []ctrl.Object {
	var out []ctrl.Object
	for _, key := range s.SortedKeys() {
		if o := s.Objs[key]; o.GetObjectKind() == k {
			out = append(out, ctrl.DeepCopy(o))
		}
	}
	return out
}

func (s *APIServer) SortedKeys() []string {
	keys := make([]string, 0, len(s.Objs))
	for k := range s.Objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// dnsSubdomain checks a name as Kubernetes does most names (an RFC 1123
// subdomain): it says what is wrong, or "".
func dnsSubdomain(n string) string {
	if len(n) > 253 {
		return "must be no more than 253 characters (it has " + strconv.Itoa(len(n)) + ")"
	}
	ok := n != ""
	for i := 0; i < len(n) && ok; i++ {
		c := n[i]
		switch {
		case isAlnum(c):
		case c == '-':
			ok = i > 0 && i < len(n)-1 && n[i-1] != '.' && n[i+1] != '.'
		case c == '.':
			ok = i > 0 && i < len(n)-1 && isAlnum(n[i-1]) && isAlnum(n[i+1])
		default:
			ok = false
		}
	}
	if !ok {
		return "a name must be lower-case letters, digits, '-' or '.', start and end with a letter or digit, and have a letter or digit on each side of every '.'"
	}
	return ""
}

// dnsLabel checks a namespace: an RFC 1123 label, a subdomain with no '.'
// of at most 63 characters.
func dnsLabel(n string) string {
	if len(n) > 63 {
		return "must be no more than 63 characters (it has " + strconv.Itoa(len(n)) + ")"
	}
	if strings.Contains(n, ".") || dnsSubdomain(n) != "" {
		return "a namespace must be lower-case letters, digits and '-', and start and end with a letter or digit"
	}
	return ""
}

// labelName checks the name part of a label or annotation key, and a
// label's value: at most 63 characters, letters, digits, '-', '_' and
// '.', beginning and ending with a letter or digit. Values may be empty.
func labelName(v string, emptyOK bool) string {
	if len(v) > 63 {
		return "must be no more than 63 characters (it has " + strconv.Itoa(len(v)) + ")"
	}
	if v == "" {
		if emptyOK {
			return ""
		}
		return "must not be empty"
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		alnum := isAlnum(c) || c >= 'A' && c <= 'Z'
		if !alnum && ((i == 0 || i == len(v)-1) || c != '-' && c != '_' && c != '.') {
			return "must be letters, digits, '-', '_' or '.', and start and end with a letter or digit"
		}
	}
	return ""
}

// qualifiedName checks a label or annotation key: an optional prefix (a
// DNS subdomain) and '/', then a name as labelName has it.
func qualifiedName(k string) string {
	name := k
	if prefix, rest, ok := strings.Cut(k, "/"); ok {
		if why := dnsSubdomain(prefix); why != "" {
			return "the prefix before '/' " + strings.Replace(why, "a name must", "must", 1)
		}
		name = rest
	}
	return labelName(name, false)
}

// validateMeta checks what a create or update sets in metadata: name,
// namespace, labels and annotations, as the real API server does.
func validateMeta(k ctrl.Kind, m *ctrl.ObjectMeta) *ctrl.StatusError {
	if m.Name != "" || m.GenerateName == "" { // a generated name is valid when its prefix is
		if why := dnsSubdomain(m.Name); why != "" {
			return APIErr(422, ctrl.ReasonInvalid, ObjRef(k, m.Name)+" is invalid: metadata.name: "+why)
		}
	}
	if why := dnsLabel(m.Namespace); m.Namespace != "" && why != "" { // "" becomes "default" on create
		return invalid(k, m.Name, "metadata.namespace", "Invalid value \""+text.Shown(m.Namespace)+"\": "+why)
	}
	for _, key := range text.SortedKeys(m.Labels) {
		if why := qualifiedName(key); why != "" {
			return invalid(k, m.Name, "metadata.labels", "Invalid key \""+text.Shown(key)+"\": "+why)
		}
		if why := labelName(m.Labels[key], true); why != "" {
			return invalid(k, m.Name, "metadata.labels", "Invalid value \""+text.Shown(m.Labels[key])+"\" for key \""+text.Shown(key)+"\": "+why)
		}
	}
	total := 0
	for _, key := range text.SortedKeys(m.Annotations) {
		if why := qualifiedName(strings.ToLower(key)); why != "" {
			return invalid(k, m.Name, "metadata.annotations", "Invalid key \""+text.Shown(key)+"\": "+why)
		}
		total += len(key) + len(m.Annotations[key])
	}
	if total > maxAnnotationBytes {
		return invalid(k, m.Name, "metadata.annotations", "Too long: must have at most "+strconv.Itoa(maxAnnotationBytes)+
			" bytes (they have "+strconv.Itoa(total)+")")
	}
	return nil
}

// admit checks an object of size bytes about to be stored under key
// against the size limit and the quota, counting what it replaces.
func (s *APIServer) admit(o ctrl.Object, key string, size int) *ctrl.StatusError {
	m := o.GetObjectMeta()
	if size > maxObjectBytes {
		return TooBig(o.GetObjectKind(), m.Name, size)
	}
	old, exists := s.size[key]
	if !exists && len(s.Objs) >= maxObjects {
		return APIErr(403, ctrl.ReasonForbidden, ObjRef(o.GetObjectKind(), m.Name)+" is forbidden: exceeded quota: "+
			strconv.Itoa(maxObjects)+" objects exist, the most this test's cluster holds")
	}
	if s.bytes-old+size > maxStoredBytes {
		return APIErr(403, ctrl.ReasonForbidden, ObjRef(o.GetObjectKind(), m.Name)+" is forbidden: exceeded quota: storing its "+
			text.Thousands(int64(size))+" bytes would bring this test's cluster to "+text.Thousands(int64(s.bytes-old+size))+
			" bytes; it holds at most "+text.Thousands(maxStoredBytes)+" ("+MiB(maxStoredBytes)+")")
	}
	return nil
}

func TooBig(k ctrl.Kind, name string, size int) *ctrl.StatusError {
	return APIErr(413, ctrl.ReasonRequestEntityTooLarge, ObjRef(k, name)+" is too large: "+MiB(size)+
		" encoded; the API server stores at most "+MiB(maxObjectBytes)+" per object (etcd's request limit)")
}

// MiB writes a byte count in MiB with two decimals, or in bytes when small.
func MiB(n int) string {
	if n < 1<<20 {
		return text.Thousands(int64(n)) + " bytes"
	}
	h := (n*100 + 1<<19) >> 20
	return strconv.Itoa(h/100) + "." + strconv.Itoa(h/10%10) + strconv.Itoa(h%10) + " MiB"
}

// put stores o under its key, keeping the size accounts.
func (s *APIServer) put(o ctrl.Object, size int) {
	key := KeyOf(o)
	s.bytes += size - s.size[key]
	s.size[key] = size
	s.Objs[key] = o
}

func objSize(o ctrl.Object) int { return len(ctrl.AppendObject(nil, o)) }

// Create stores a new object. keepStatus is for objects seeded by a test;
// the API server otherwise starts a new object's status empty.
func (s *APIServer) Create(in ctrl.Object, keepStatus bool) (ctrl.Object, *ctrl.StatusError) {
	// Checked in the real API server's order (validation, then quota,
	// then storage), except that size comes first, and all before any
	// copy is made: a refusal costs one encoding. The size is the
	// object's as sent; the server's own fields add a few dozen bytes.
	k, im := in.GetObjectKind(), in.GetObjectMeta()
	size := objSize(in)
	if size > maxObjectBytes {
		return nil, TooBig(k, im.Name+im.GenerateName, size)
	}
	if im.Name == "" {
		if im.GenerateName == "" {
			return nil, APIErr(422, ctrl.ReasonInvalid, text.Shown(string(k))+" is invalid: metadata.name or metadata.generateName is required")
		}
		// As Kubernetes: the prefix may end in '-'.
		if why := dnsSubdomain(strings.TrimSuffix(im.GenerateName, "-") + "a"); why != "" {
			return nil, APIErr(422, ctrl.ReasonInvalid, text.Shown(string(k))+" is invalid: metadata.generateName: Invalid value \""+
				text.Shown(im.GenerateName)+"\": "+why)
		}
	}
	if err := validateMeta(k, im); err != nil {
		return nil, err
	}
	if im.ResourceVersion != "" {
		return nil, APIErr(422, ctrl.ReasonInvalid, ObjRef(k, im.Name)+" is invalid: resourceVersion must not be set on create")
	}
	if err := s.admit(in, "", size); err != nil {
		return nil, err
	}
	o := ctrl.DeepCopy(in)
	m := o.GetObjectMeta()
	if m.Namespace == "" {
		m.Namespace = "default"
	}
	if m.Name == "" {
		// Only the prefix's first 58 characters are kept, so the name
		// with its suffix fits 63.
		base := m.GenerateName
		if len(base) > maxGeneratedBase {
			base = base[:maxGeneratedBase]
		}
		for {
			m.Name = base + s.suffix()
			if s.Objs[KeyOf(o)] == nil {
				break
			}
		}
	}
	if s.Objs[KeyOf(o)] != nil {
		return nil, APIErr(409, ctrl.ReasonAlreadyExists, ObjRef(k, m.Name)+" already exists")
	}
	m.UID = s.newUID()
	m.ResourceVersion = s.nextRV()
	m.Generation = 1
	m.CreationTimestamp = s.now()
	m.DeletionTimestamp = nil
	if !keepStatus {
		ctrl.ClearStatus(o)
	}
	s.put(o, objSize(o))
	s.noteOwners(nil, o)
	s.Watch(WatchEvent{EvAdded, ctrl.DeepCopy(o)})
	return ctrl.DeepCopy(o), nil
}

// specOf is the object's wire form with metadata and status blanked, for
// telling spec changes (which bump generation) from the rest.
func specOf(o ctrl.Object) []byte {
	c := ctrl.DeepCopy(o)
	*c.GetObjectMeta() = ctrl.ObjectMeta{}
	ctrl.ClearStatus(c)
	return ctrl.AppendObject(nil, c)
}

func (s *APIServer) current(in ctrl.Object) (ctrl.Object, *ctrl.StatusError) {
	m := in.GetObjectMeta()
	ns := m.Namespace
	if ns == "" {
		ns = "default"
	}
	cur := s.Objs[objKey(in.GetObjectKind(), ns, m.Name)]
	if cur == nil {
		return nil, notFound(in.GetObjectKind(), m.Name)
	}
	if m.ResourceVersion != "" && m.ResourceVersion != cur.GetObjectMeta().ResourceVersion {
		return nil, APIErr(409, ctrl.ReasonConflict, "Operation cannot be fulfilled on "+string(in.GetObjectKind())+" \""+m.Name+
			"\": the object has been modified; please apply your changes to the latest version and try again")
	}
	if m.UID != "" && m.UID != cur.GetObjectMeta().UID {
		return nil, APIErr(409, ctrl.ReasonConflict, "Operation cannot be fulfilled on "+string(in.GetObjectKind())+" \""+m.Name+
			"\": the UID in the object ("+text.Shown(m.UID)+") does not match the stored one")
	}
	return cur, nil
}

// Update replaces metadata (labels, annotations, owners, finalizers) and
// spec, keeping status; or, with status set, replaces only status.
func (s *APIServer) Update(in ctrl.Object, status bool) (ctrl.Object, *ctrl.StatusError) {
	cur, err := s.current(in)
	if err != nil {
		return nil, err
	}
	if n := objSize(in); n > maxObjectBytes {
		return nil, TooBig(in.GetObjectKind(), in.GetObjectMeta().Name, n) // before any copy of it is made
	}
	o := ctrl.DeepCopy(in)
	cm, m := cur.GetObjectMeta(), o.GetObjectMeta()
	if status {
		// Only status changes: take everything else from the stored object.
		next := ctrl.DeepCopy(cur)
		ctrl.CopyStatus(next, o)
		o, m = next, next.GetObjectMeta()
	} else {
		if cm.DeletionTimestamp != nil {
			for _, f := range m.Finalizers {
				if !slices.Contains(cm.Finalizers, f) {
					return nil, APIErr(422, ctrl.ReasonInvalid, string(in.GetObjectKind())+" \""+m.Name+
						"\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers [\""+text.Shown(f)+"\"]")
				}
			}
		}
		ctrl.CopyStatus(o, cur)
		m.Namespace, m.UID, m.CreationTimestamp, m.DeletionTimestamp = cm.Namespace, cm.UID, cm.CreationTimestamp, cm.DeletionTimestamp
		m.GenerateName = cm.GenerateName
		m.Generation = cm.Generation
		if !bytes.Equal(specOf(o), specOf(cur)) {
			m.Generation++
		}
		if err := validateMeta(o.GetObjectKind(), m); err != nil {
			return nil, err
		}
	}
	if bytes.Equal(ctrl.AppendObject(nil, withRV(o, "")), ctrl.AppendObject(nil, withRV(cur, ""))) {
		// A no-op write still counts as a write, but Kubernetes keeps the
		// resourceVersion and sends no event.
		return ctrl.DeepCopy(cur), nil
	}
	size := objSize(o)
	if err := s.admit(o, KeyOf(o), size); err != nil {
		return nil, err
	}
	m.ResourceVersion = s.nextRV()
	if m.DeletionTimestamp != nil && len(m.Finalizers) == 0 {
		s.remove(o)
		return ctrl.DeepCopy(o), nil
	}
	if !status {
		s.noteOwners(cur, o)
	}
	s.put(o, size)
	s.Watch(WatchEvent{EvModified, ctrl.DeepCopy(o)})
	return ctrl.DeepCopy(o), nil
}

func withRV(o ctrl.Object, rv string) ctrl.Object {
	c := ctrl.DeepCopy(o)
	c.GetObjectMeta().ResourceVersion = rv
	return c
}

// Delete deletes an object: at once without finalizers, else by setting
// deletionTimestamp. The garbage collector later removes dependents.
func (s *APIServer) Delete(k ctrl.Kind, ns, name string) (ctrl.Object, *ctrl.StatusError) {
	if ns == "" {
		ns = "default"
	}
	cur := s.Objs[objKey(k, ns, name)]
	if cur == nil {
		return nil, notFound(k, name)
	}
	m := cur.GetObjectMeta()
	if len(m.Finalizers) > 0 {
		if m.DeletionTimestamp == nil {
			t := s.now()
			m.DeletionTimestamp = &t
			m.ResourceVersion = s.nextRV()
			s.put(cur, objSize(cur))
			s.Watch(WatchEvent{EvModified, ctrl.DeepCopy(cur)})
		}
		return ctrl.DeepCopy(cur), nil
	}
	s.remove(cur)
	return ctrl.DeepCopy(cur), nil
}

func (s *APIServer) remove(o ctrl.Object) {
	key := KeyOf(o)
	s.bytes -= s.size[key]
	delete(s.Objs, key)
	delete(s.size, key)
	delete(s.Owners, o.GetObjectMeta().UID)
	s.Watch(WatchEvent{EvDeleted, ctrl.DeepCopy(o)})
}

// orphans lists objects with an owner reference to a UID that no longer
// exists, in key order: what the garbage collector deletes next.
func (s *APIServer) orphans() []ctrl.Object {
	live := map[string]bool{}
	for _, o := range s.Objs {
		live[o.GetObjectMeta().UID] = true
	}
	var out []ctrl.Object
	for _, key := range s.SortedKeys() {
		o := s.Objs[key]
		for _, r := range o.GetObjectMeta().OwnerReferences {
			if !live[r.UID] {
				if o.GetObjectMeta().DeletionTimestamp == nil {
					out = append(out, ctrl.DeepCopy(o))
				}
				break
			}
		}
	}
	return out
}

// SetPodStatus is the kubelet's write to a Pod's status.
func (s *APIServer) SetPodStatus(ns, name string, st ctrl.PodStatus) bool {
	cur, ok := s.Objs[objKey(ctrl.KindPod, ns, name)].(*ctrl.Pod)
	if !ok {
		return false
	}
	next := ctrl.DeepCopy(cur).(*ctrl.Pod)
	next.Status = st
	_, err := s.Update(next, true)
	return err == nil
}

func OrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
