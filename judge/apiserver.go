package judge

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
)

// apiServer is the simulated API server: the source of truth. It follows
// the Kubernetes API conventions the exercises rely on: a new UID per
// object, a resourceVersion bumped on every write, generation bumped on
// spec changes, optimistic concurrency (409 Conflict on a stale
// resourceVersion), AlreadyExists, NotFound, generateName, a status
// subresource, finalizers with deletionTimestamp, and owner references
// whose dependents the garbage collector deletes in the background.
type apiServer struct {
	objs  map[string]ctrl.Object // by objKey
	size  map[string]int         // each stored object's encoded size, by objKey
	bytes int                    // the sum of size
	rv    int64
	uids  int
	rng   *rand.Rand
	now   func() time.Time
	watch func(ev watchEvent) // called on every change
	// by names who is writing; owners is what others set (ownership.go).
	by     func() string
	owners map[string]map[metaKey]string // by UID
}

type eventType string

const (
	evAdded    eventType = "ADDED"
	evModified eventType = "MODIFIED"
	evDeleted  eventType = "DELETED"
)

type watchEvent struct {
	Type   eventType
	Object ctrl.Object // a copy; for DELETED the last state
}

func objKey(k ctrl.Kind, ns, name string) string { return string(k) + "/" + ns + "/" + name }

func keyOf(o ctrl.Object) string {
	m := o.GetObjectMeta()
	return objKey(o.GetObjectKind(), m.Namespace, m.Name)
}

func newAPIServer(rng *rand.Rand, now func() time.Time) *apiServer {
	return &apiServer{objs: map[string]ctrl.Object{}, size: map[string]int{}, rng: rng, now: now, watch: func(watchEvent) {},
		by: func() string { return "" }, owners: map[string]map[metaKey]string{}}
}

// What the simulated API server refuses, as a real one would (see
// RATIONALE.md, "Bounds"). The limits on objects keep a test's memory
// small whatever the controller writes.
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

func apiErr(code int32, reason, msg string) *ctrl.StatusError {
	return &ctrl.StatusError{Code: code, Reason: reason, Message: msg}
}

func notFound(k ctrl.Kind, name string) *ctrl.StatusError {
	return apiErr(404, ctrl.ReasonNotFound, objRef(k, name)+" not found")
}

// shown is a kind, name or value as an error message quotes it: the
// learner chose it, so it is clipped.
func shown(s string) string { return clip(s, maxShownValue) }

// objRef is how an error names an object: ConfigMap "name".
func objRef(k ctrl.Kind, name string) string { return shown(string(k)) + " \"" + shown(name) + "\"" }

func invalid(k ctrl.Kind, name, field, why string) *ctrl.StatusError {
	return apiErr(422, ctrl.ReasonInvalid, objRef(k, name)+" is invalid: "+field+": "+why)
}

func (s *apiServer) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789" // as Kubernetes: no vowels, no look-alikes

func (s *apiServer) suffix() string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = suffixAlphabet[s.rng.IntN(len(suffixAlphabet))]
	}
	return string(b)
}

func (s *apiServer) newUID() string {
	s.uids++
	return "uid-" + strconv.Itoa(s.uids)
}

// get returns a copy of the stored object, or nil.
func (s *apiServer) get(k ctrl.Kind, ns, name string) ctrl.Object {
	o := s.objs[objKey(k, ns, name)]
	if o == nil {
		return nil
	}
	return ctrl.DeepCopy(o)
}

// list returns copies of every object of kind k, sorted by namespace and name.
func (s *apiServer) list(k ctrl.Kind) []ctrl.Object {
	var out []ctrl.Object
	for _, key := range s.sortedKeys() {
		if o := s.objs[key]; o.GetObjectKind() == k {
			out = append(out, ctrl.DeepCopy(o))
		}
	}
	return out
}

func (s *apiServer) sortedKeys() []string {
	keys := make([]string, 0, len(s.objs))
	for k := range s.objs {
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
			return apiErr(422, ctrl.ReasonInvalid, objRef(k, m.Name)+" is invalid: metadata.name: "+why)
		}
	}
	if why := dnsLabel(m.Namespace); m.Namespace != "" && why != "" { // "" becomes "default" on create
		return invalid(k, m.Name, "metadata.namespace", "Invalid value \""+shown(m.Namespace)+"\": "+why)
	}
	for _, key := range sortedKeys(m.Labels) {
		if why := qualifiedName(key); why != "" {
			return invalid(k, m.Name, "metadata.labels", "Invalid key \""+shown(key)+"\": "+why)
		}
		if why := labelName(m.Labels[key], true); why != "" {
			return invalid(k, m.Name, "metadata.labels", "Invalid value \""+shown(m.Labels[key])+"\" for key \""+shown(key)+"\": "+why)
		}
	}
	total := 0
	for _, key := range sortedKeys(m.Annotations) {
		if why := qualifiedName(strings.ToLower(key)); why != "" {
			return invalid(k, m.Name, "metadata.annotations", "Invalid key \""+shown(key)+"\": "+why)
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
func (s *apiServer) admit(o ctrl.Object, key string, size int) *ctrl.StatusError {
	m := o.GetObjectMeta()
	if size > maxObjectBytes {
		return tooBig(o.GetObjectKind(), m.Name, size)
	}
	old, exists := s.size[key]
	if !exists && len(s.objs) >= maxObjects {
		return apiErr(403, ctrl.ReasonForbidden, objRef(o.GetObjectKind(), m.Name)+" is forbidden: exceeded quota: "+
			strconv.Itoa(maxObjects)+" objects exist, the most this test's cluster holds")
	}
	if s.bytes-old+size > maxStoredBytes {
		return apiErr(403, ctrl.ReasonForbidden, objRef(o.GetObjectKind(), m.Name)+" is forbidden: exceeded quota: storing its "+
			thousands(int64(size))+" bytes would bring this test's cluster to "+thousands(int64(s.bytes-old+size))+
			" bytes; it holds at most "+thousands(maxStoredBytes)+" ("+mib(maxStoredBytes)+")")
	}
	return nil
}

func tooBig(k ctrl.Kind, name string, size int) *ctrl.StatusError {
	return apiErr(413, ctrl.ReasonRequestEntityTooLarge, objRef(k, name)+" is too large: "+mib(size)+
		" encoded; the API server stores at most "+mib(maxObjectBytes)+" per object (etcd's request limit)")
}

// mib writes a byte count in MiB with two decimals, or in bytes when small.
func mib(n int) string {
	if n < 1<<20 {
		return thousands(int64(n)) + " bytes"
	}
	h := (n*100 + 1<<19) >> 20
	return strconv.Itoa(h/100) + "." + strconv.Itoa(h/10%10) + strconv.Itoa(h%10) + " MiB"
}

// put stores o under its key, keeping the size accounts.
func (s *apiServer) put(o ctrl.Object, size int) {
	key := keyOf(o)
	s.bytes += size - s.size[key]
	s.size[key] = size
	s.objs[key] = o
}

func objSize(o ctrl.Object) int { return len(ctrl.AppendObject(nil, o)) }

// create stores a new object. keepStatus is for objects seeded by a test;
// the API server otherwise starts a new object's status empty.
func (s *apiServer) create(in ctrl.Object, keepStatus bool) (ctrl.Object, *ctrl.StatusError) {
	// Checked in the real API server's order (validation, then quota,
	// then storage), except that size comes first, and all before any
	// copy is made: a refusal costs one encoding. The size is the
	// object's as sent; the server's own fields add a few dozen bytes.
	k, im := in.GetObjectKind(), in.GetObjectMeta()
	size := objSize(in)
	if size > maxObjectBytes {
		return nil, tooBig(k, im.Name+im.GenerateName, size)
	}
	if im.Name == "" {
		if im.GenerateName == "" {
			return nil, apiErr(422, ctrl.ReasonInvalid, shown(string(k))+" is invalid: metadata.name or metadata.generateName is required")
		}
		// As Kubernetes: the prefix may end in '-'.
		if why := dnsSubdomain(strings.TrimSuffix(im.GenerateName, "-") + "a"); why != "" {
			return nil, apiErr(422, ctrl.ReasonInvalid, shown(string(k))+" is invalid: metadata.generateName: Invalid value \""+
				shown(im.GenerateName)+"\": "+why)
		}
	}
	if err := validateMeta(k, im); err != nil {
		return nil, err
	}
	if im.ResourceVersion != "" {
		return nil, apiErr(422, ctrl.ReasonInvalid, objRef(k, im.Name)+" is invalid: resourceVersion must not be set on create")
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
			if s.objs[keyOf(o)] == nil {
				break
			}
		}
	}
	if s.objs[keyOf(o)] != nil {
		return nil, apiErr(409, ctrl.ReasonAlreadyExists, objRef(k, m.Name)+" already exists")
	}
	m.UID = s.newUID()
	m.ResourceVersion = s.nextRV()
	m.Generation = 1
	m.CreationTimestamp = s.now()
	m.DeletionTimestamp = nil
	if !keepStatus {
		clearStatus(o)
	}
	s.put(o, objSize(o))
	s.noteOwners(nil, o)
	s.watch(watchEvent{evAdded, ctrl.DeepCopy(o)})
	return ctrl.DeepCopy(o), nil
}

func clearStatus(o ctrl.Object) {
	switch x := o.(type) {
	case *ctrl.Deployment:
		x.Status = ctrl.DeploymentStatus{}
	case *ctrl.Pod:
		x.Status = ctrl.PodStatus{}
	}
}

// specOf is the object's wire form with metadata and status blanked, for
// telling spec changes (which bump generation) from the rest.
func specOf(o ctrl.Object) []byte {
	c := ctrl.DeepCopy(o)
	*c.GetObjectMeta() = ctrl.ObjectMeta{}
	clearStatus(c)
	return ctrl.AppendObject(nil, c)
}

func (s *apiServer) current(in ctrl.Object) (ctrl.Object, *ctrl.StatusError) {
	m := in.GetObjectMeta()
	ns := m.Namespace
	if ns == "" {
		ns = "default"
	}
	cur := s.objs[objKey(in.GetObjectKind(), ns, m.Name)]
	if cur == nil {
		return nil, notFound(in.GetObjectKind(), m.Name)
	}
	if m.ResourceVersion != "" && m.ResourceVersion != cur.GetObjectMeta().ResourceVersion {
		return nil, apiErr(409, ctrl.ReasonConflict, "Operation cannot be fulfilled on "+string(in.GetObjectKind())+" \""+m.Name+
			"\": the object has been modified; please apply your changes to the latest version and try again")
	}
	if m.UID != "" && m.UID != cur.GetObjectMeta().UID {
		return nil, apiErr(409, ctrl.ReasonConflict, "Operation cannot be fulfilled on "+string(in.GetObjectKind())+" \""+m.Name+
			"\": the UID in the object ("+shown(m.UID)+") does not match the stored one")
	}
	return cur, nil
}

// update replaces metadata (labels, annotations, owners, finalizers) and
// spec, keeping status; or, with status set, replaces only status.
func (s *apiServer) update(in ctrl.Object, status bool) (ctrl.Object, *ctrl.StatusError) {
	cur, err := s.current(in)
	if err != nil {
		return nil, err
	}
	if n := objSize(in); n > maxObjectBytes {
		return nil, tooBig(in.GetObjectKind(), in.GetObjectMeta().Name, n) // before any copy of it is made
	}
	o := ctrl.DeepCopy(in)
	cm, m := cur.GetObjectMeta(), o.GetObjectMeta()
	if status {
		// Only status changes: take everything else from the stored object.
		next := ctrl.DeepCopy(cur)
		copyStatus(next, o)
		o, m = next, next.GetObjectMeta()
	} else {
		if cm.DeletionTimestamp != nil {
			for _, f := range m.Finalizers {
				if !slices.Contains(cm.Finalizers, f) {
					return nil, apiErr(422, ctrl.ReasonInvalid, string(in.GetObjectKind())+" \""+m.Name+
						"\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers [\""+shown(f)+"\"]")
				}
			}
		}
		copyStatus(o, cur)
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
	if err := s.admit(o, keyOf(o), size); err != nil {
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
	s.watch(watchEvent{evModified, ctrl.DeepCopy(o)})
	return ctrl.DeepCopy(o), nil
}

func withRV(o ctrl.Object, rv string) ctrl.Object {
	c := ctrl.DeepCopy(o)
	c.GetObjectMeta().ResourceVersion = rv
	return c
}

func copyStatus(dst, src ctrl.Object) {
	switch d := dst.(type) {
	case *ctrl.Deployment:
		d.Status = src.(*ctrl.Deployment).Status
	case *ctrl.Pod:
		d.Status = src.(*ctrl.Pod).Status
	}
}

// delete deletes an object: at once without finalizers, else by setting
// deletionTimestamp. The garbage collector later removes dependents.
func (s *apiServer) delete(k ctrl.Kind, ns, name string) (ctrl.Object, *ctrl.StatusError) {
	if ns == "" {
		ns = "default"
	}
	cur := s.objs[objKey(k, ns, name)]
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
			s.watch(watchEvent{evModified, ctrl.DeepCopy(cur)})
		}
		return ctrl.DeepCopy(cur), nil
	}
	s.remove(cur)
	return ctrl.DeepCopy(cur), nil
}

func (s *apiServer) remove(o ctrl.Object) {
	key := keyOf(o)
	s.bytes -= s.size[key]
	delete(s.objs, key)
	delete(s.size, key)
	delete(s.owners, o.GetObjectMeta().UID)
	s.watch(watchEvent{evDeleted, ctrl.DeepCopy(o)})
}

// orphans lists objects with an owner reference to a UID that no longer
// exists, in key order: what the garbage collector deletes next.
func (s *apiServer) orphans() []ctrl.Object {
	live := map[string]bool{}
	for _, o := range s.objs {
		live[o.GetObjectMeta().UID] = true
	}
	var out []ctrl.Object
	for _, key := range s.sortedKeys() {
		o := s.objs[key]
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

// setPodStatus is the kubelet's write to a Pod's status.
func (s *apiServer) setPodStatus(ns, name string, st ctrl.PodStatus) bool {
	cur, ok := s.objs[objKey(ctrl.KindPod, ns, name)].(*ctrl.Pod)
	if !ok {
		return false
	}
	next := ctrl.DeepCopy(cur).(*ctrl.Pod)
	next.Status = st
	_, err := s.update(next, true)
	return err == nil
}
