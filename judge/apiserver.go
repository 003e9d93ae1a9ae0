package judge

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
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
	rv    int64
	uids  int
	rng   *rand.Rand
	now   func() time.Time
	watch func(ev watchEvent) // called on every change
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
	return &apiServer{objs: map[string]ctrl.Object{}, rng: rng, now: now, watch: func(watchEvent) {}}
}

func apiErr(code int32, reason, msg string) *ctrl.StatusError {
	return &ctrl.StatusError{Code: code, Reason: reason, Message: msg}
}

func notFound(k ctrl.Kind, name string) *ctrl.StatusError {
	return apiErr(404, ctrl.ReasonNotFound, string(k)+" \""+name+"\" not found")
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

func validName(n string) bool {
	if n == "" || len(n) > 253 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return n[0] != '-' && n[len(n)-1] != '-'
}

// create stores a new object. keepStatus is for objects seeded by a test;
// the API server otherwise starts a new object's status empty.
func (s *apiServer) create(in ctrl.Object, keepStatus bool) (ctrl.Object, *ctrl.StatusError) {
	o := ctrl.DeepCopy(in)
	m := o.GetObjectMeta()
	if m.Namespace == "" {
		m.Namespace = "default"
	}
	if m.Name == "" {
		if m.GenerateName == "" {
			return nil, apiErr(422, ctrl.ReasonInvalid, string(o.GetObjectKind())+" is invalid: metadata.name or metadata.generateName is required")
		}
		for {
			m.Name = m.GenerateName + s.suffix()
			if s.objs[keyOf(o)] == nil {
				break
			}
		}
	}
	if !validName(m.Name) {
		return nil, apiErr(422, ctrl.ReasonInvalid, string(o.GetObjectKind())+" \""+m.Name+"\" is invalid: a name must be lower-case letters, digits, '-' or '.'")
	}
	if m.ResourceVersion != "" {
		return nil, apiErr(422, ctrl.ReasonInvalid, string(o.GetObjectKind())+" \""+m.Name+"\" is invalid: resourceVersion must not be set on create")
	}
	if s.objs[keyOf(o)] != nil {
		return nil, apiErr(409, ctrl.ReasonAlreadyExists, string(o.GetObjectKind())+" \""+m.Name+"\" already exists")
	}
	m.UID = s.newUID()
	m.ResourceVersion = s.nextRV()
	m.Generation = 1
	m.CreationTimestamp = s.now()
	m.DeletionTimestamp = nil
	if !keepStatus {
		clearStatus(o)
	}
	s.objs[keyOf(o)] = o
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
			"\": the UID in the object ("+m.UID+") does not match the stored one")
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
						"\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers [\""+f+"\"]")
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
	}
	if bytes.Equal(ctrl.AppendObject(nil, withRV(o, "")), ctrl.AppendObject(nil, withRV(cur, ""))) {
		// A no-op write still counts as a write, but Kubernetes keeps the
		// resourceVersion and sends no event.
		return ctrl.DeepCopy(cur), nil
	}
	m.ResourceVersion = s.nextRV()
	if m.DeletionTimestamp != nil && len(m.Finalizers) == 0 {
		s.remove(o)
		return ctrl.DeepCopy(o), nil
	}
	s.objs[keyOf(o)] = o
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
			s.watch(watchEvent{evModified, ctrl.DeepCopy(cur)})
		}
		return ctrl.DeepCopy(cur), nil
	}
	s.remove(cur)
	return ctrl.DeepCopy(cur), nil
}

func (s *apiServer) remove(o ctrl.Object) {
	delete(s.objs, keyOf(o))
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
