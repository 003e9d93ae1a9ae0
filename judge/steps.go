package judge

import (
	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"encoding/json"
	"slices"
	"strings"
)

// A test's workload as the user and the other actors apply it: its
// objects, its steps, and the edits that wait for the controller's next
// write.

// hasPod says whether pickPod would find a Pod, without drawing.
func (s *sim) hasPod(running bool) bool {
	for _, o := range s.api.List(ctrl.KindPod) {
		p := o.(*ctrl.Pod)
		if p.DeletionTimestamp == nil && (!running || p.Status.Phase == ctrl.PodRunning) {
			return true
		}
	}
	return false
}

// pickPod picks a Pod by name order or by the seed; running asks for a
// Running one.
func (s *sim) pickPod(how string, running bool) *ctrl.Pod {
	return s.pickPodWhere(how, func(p *ctrl.Pod) bool { return !running || p.Status.Phase == ctrl.PodRunning })
}

// faultPod picks the Pod a fault of class f acts on, by a draw of its own
// (keyed by the class and how often it fired), so that faults do not move
// the steps' stream.
func (s *sim) faultPod(f verdict.Fault, running bool) *ctrl.Pod {
	r := mix(s.seed, "target/"+string(f), uint64(s.faults.fired[f]))
	return s.pickPodDrawn("random", r, func(p *ctrl.Pod) bool { return !running || p.Status.Phase == ctrl.PodRunning })
}

// pickPodWhere picks, among the Pods not being deleted that ok accepts,
// one by name ("first", "last", or its name) or by the seed ("random").
func (s *sim) pickPodWhere(how string, ok func(*ctrl.Pod) bool) *ctrl.Pod {
	// The draw is made whether or not it is used, so that the steps
	// alone move the stream.
	return s.pickPodDrawn(how, s.picks.Uint64(), ok)
}

// pickPodDrawn is pickPodWhere with "random" decided by the draw r.
func (s *sim) pickPodDrawn(how string, r uint64, ok func(*ctrl.Pod) bool) *ctrl.Pod {
	var cands []*ctrl.Pod
	for _, o := range s.api.List(ctrl.KindPod) {
		p := o.(*ctrl.Pod)
		if p.DeletionTimestamp == nil && ok(p) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	switch how {
	case "first":
		return cands[0]
	case "last":
		return cands[len(cands)-1]
	case "random":
		return cands[r%uint64(len(cands))]
	}
	for _, p := range cands {
		if p.Name == how {
			return p
		}
	}
	return nil
}

// seedObject creates an object of the test's, as the user; one whose
// manifest has a deletionTimestamp is then deleted, so it stays, being
// deleted, as long as its finalizers hold it.
func (s *sim) seedObject(o ctrl.Object) *ctrl.StatusError {
	if _, err := s.api.Create(resolveOwners(o, s.api), true); err != nil {
		return err
	}
	if m := o.GetObjectMeta(); m.DeletionTimestamp != nil {
		if _, err := s.api.Delete(o.GetObjectKind(), cluster.OrDefault(m.Namespace), m.Name); err != nil {
			return err
		}
	}
	return nil
}

// missing reports a step whose object is not there: a setup error in a
// written test, a step skipped in one that says skipMissing (generated
// scenarios, whose steps are drawn before the controller shapes the world).
func (s *sim) missing(msg string) {
	if s.test.SkipMissing {
		s.rec.Logf("judge", "step skipped: ", msg)
		return
	}
	s.failf(verdict.OracleSetup, msg)
}

// patch merges p into the object ref names ("Kind/name"), as the current
// actor.
func (s *sim) patch(ref string, p map[string]any) bool {
	cur := s.api.Get(splitRef(ref))
	if cur == nil {
		s.missing("The test patches " + ref + ", which does not exist.")
		return false
	}
	next, err := cluster.MergePatch(cur, p)
	if err != nil {
		s.failf(verdict.OracleSetup, "The test's patch of "+ref+" is invalid: "+err.Error())
		return false
	}
	if _, serr := s.api.Update(next, false); serr != nil {
		s.failf(verdict.OracleSetup, "The test's patch of "+ref+" was refused: "+serr.Message)
		return false
	}
	b, _ := json.Marshal(p)
	s.rec.Logf(s.actor, "patched ", ref, " with ", string(b))
	return true
}

// edit is a meanwhile step's patch, or its object to apply, waiting for
// its moment.
type lateEdit struct {
	ref   string // Kind/name
	patch map[string]any
	obj   ctrl.Object // meanwhileApply's, instead of a patch
	step  int         // the step that armed it
}

// meanwhileEdits lands the test's edits waiting for a write to an object
// right before the controller's write to it.
func (s *sim) meanwhileEdits() interceptor {
	return writes(func(next callFunc, c *ctrl.Call) (ctrl.Reply, error) {
		if c.Object != nil {
			m := c.Object.GetObjectMeta()
			s.landMeanwhile(c.Object.GetObjectKind(), cluster.OrDefault(m.Namespace), m.Name, 0)
		} else {
			s.landMeanwhile(c.Kind, cluster.OrDefault(c.Key.Namespace), c.Key.Name, 0)
		}
		return next(c)
	})
}

// landMeanwhile applies the waiting meanwhile edits of the object kind
// and name name, as another actor, right before a controller write to
// it. With kind "", before step i, it applies those that waited through
// a whole step for a write that never came.
func (s *sim) landMeanwhile(kind ctrl.Kind, ns, name string, i int) {
	if len(s.meanwhile) == 0 {
		return
	}
	rest := s.meanwhile[:0]
	for _, e := range s.meanwhile {
		k, x, n := splitRef(e.ref)
		if kind != "" && (k != kind || x != ns || n != name) || kind == "" && e.step+1 >= i {
			rest = append(rest, e)
			continue
		}
		s.withActor("user", func() {
			landed := false
			if e.obj != nil {
				landed = s.applyObject(e.obj, false)
			} else {
				landed = s.patch(e.ref, e.patch)
			}
			if landed && kind != "" {
				s.rec.Logf("user", "(that edit landed while your controller was busy, just before its write to ", e.ref, ")")
			}
		})
	}
	s.meanwhile = rest
}

func (s *sim) applyStep(st *exercise.Step) {
	s.stepN++
	s.withActor("user", func() {
		switch {
		case st.Apply != "":
			for _, o := range st.Parsed {
				if !s.applyObject(o, st.Recreate) {
					return
				}
			}
		case st.MeanwhileApply != "":
			var refs []string
			for _, o := range st.Parsed {
				m := o.GetObjectMeta()
				ref := string(o.GetObjectKind()) + "/" + cluster.OrDefault(m.Namespace) + "/" + m.Name
				s.meanwhile = append(s.meanwhile, lateEdit{ref: ref, obj: o, step: s.stepN})
				refs = append(refs, string(o.GetObjectKind())+" "+m.Name)
			}
			s.rec.Logf("user", "will apply ", strings.Join(refs, ", "), " while your controller is busy")
		case st.Patch != nil:
			for _, ref := range text.SortedKeys(st.Patch) {
				if !s.patch(ref, st.Patch[ref]) {
					return
				}
			}
		case st.Meanwhile != nil:
			for _, ref := range text.SortedKeys(st.Meanwhile) {
				s.meanwhile = append(s.meanwhile, lateEdit{ref: ref, patch: st.Meanwhile[ref], step: s.stepN})
			}
			s.rec.Logf("user", "will edit ", strings.Join(text.SortedKeys(st.Meanwhile), ", "), " while your controller is busy")
		case st.Release != nil:
			for _, ref := range text.SortedKeys(st.Release) {
				cur := s.api.Get(splitRef(ref))
				if cur == nil {
					s.missing("The test releases " + ref + ", which does not exist.")
					return
				}
				m := cur.GetObjectMeta()
				m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return slices.Contains(st.Release[ref], f) })
				if _, err := s.api.Update(cur, false); err != nil {
					s.failf(verdict.OracleSetup, "The test releases "+ref+": "+err.Message)
					return
				}
				s.rec.Logf("user", "another controller removed its finalizer ", strings.Join(st.Release[ref], ", "), " from ", ref)
			}
		case st.Unready != "":
			_, how, _ := strings.Cut(st.Unready, "/")
			p := s.pickPodWhere(how, func(p *ctrl.Pod) bool { return p.Status.Phase == ctrl.PodRunning && ctrl.IsPodReady(p) })
			if p == nil {
				s.missing("The test makes " + st.Unready + " unready, but it is not a Ready Pod.")
				return
			}
			s.withActor("kubelet", func() { s.api.SetPodStatus(p.Namespace, p.Name, cluster.RunningStatus(false)) })
			s.rec.Logf("kubelet", "Pod ", p.Name, " is no longer Ready (its readiness probe fails); it keeps running")
		case st.Ready != "":
			_, how, _ := strings.Cut(st.Ready, "/")
			unready := func(p *ctrl.Pod) bool { return p.Status.Phase == ctrl.PodRunning && !ctrl.IsPodReady(p) }
			var ps []*ctrl.Pod
			if how == "all" {
				for _, o := range s.api.List(ctrl.KindPod) {
					if p := o.(*ctrl.Pod); p.DeletionTimestamp == nil && unready(p) {
						ps = append(ps, p)
					}
				}
			} else if p := s.pickPodWhere(how, unready); p != nil {
				ps = append(ps, p)
			} else {
				s.missing("The test makes " + st.Ready + " Ready, but it is not a Running Pod that is not Ready.")
				return
			}
			for _, p := range ps {
				s.withActor("kubelet", func() { s.api.SetPodStatus(p.Namespace, p.Name, cluster.RunningStatus(true)) })
				s.rec.Logf("kubelet", "Pod ", p.Name, " is Ready again")
			}
		case st.Delete != "":
			kind, ns, name := splitRef(st.Delete)
			if kind == ctrl.KindPod && (name == "first" || name == "last" || name == "random") {
				p := s.pickPod(name, false)
				if p == nil {
					s.missing("The test deletes a Pod, but there is none.")
					return
				}
				ns, name = p.Namespace, p.Name
			}
			if _, err := s.api.Delete(kind, ns, name); err != nil {
				s.missing("The test deletes " + st.Delete + ": " + err.Message)
				return
			}
			s.rec.Logf("user", "deleted ", string(kind), " ", name)
		case st.Fail != "":
			_, how, _ := strings.Cut(st.Fail, "/")
			p := s.pickPod(how, true)
			if p == nil {
				s.missing("The test fails a Pod, but none is Running.")
				return
			}
			s.api.SetPodStatus(p.Namespace, p.Name, cluster.FailedStatus())
			s.rec.Logf("user", "Pod ", p.Name, " failed")
		}
	})
	s.Sample(verdict.MarkUser)
}

// applyObject creates o, or replaces the stored one's spec and metadata,
// as kubectl apply does; with recreate, it deletes the stored one first.
// False: the test cannot go on.
func (s *sim) applyObject(o ctrl.Object, recreate bool) bool {
	m := o.GetObjectMeta()
	if recreate && !s.recreate(o.GetObjectKind(), cluster.OrDefault(m.Namespace), m.Name) {
		return false
	}
	o = resolveOwners(o, s.api)
	m = o.GetObjectMeta()
	if cur := s.api.Get(o.GetObjectKind(), cluster.OrDefault(m.Namespace), m.Name); cur != nil {
		o = ctrl.DeepCopy(o)
		o.GetObjectMeta().ResourceVersion = ""
		// Like kubectl apply: finalizers that controllers added
		// stay unless the manifest names its own.
		if o.GetObjectMeta().Finalizers == nil {
			o.GetObjectMeta().Finalizers = cur.GetObjectMeta().Finalizers
		}
		s.api.Update(o, false)
		s.rec.Logf("user", "updated ", string(o.GetObjectKind()), " ", m.Name)
		return true
	}
	if err := s.seedObject(o); err != nil {
		s.failf(verdict.OracleSetup, "The test's step creates an invalid object: "+err.Message)
		return false
	}
	s.rec.Logf("user", "created ", string(o.GetObjectKind()), " ", m.Name)
	return true
}

// recreate deletes an object a recreate step creates again, and holds the
// garbage collector back until the controller's next call, as a real
// one, working in the background, may not have reached the old object's
// dependents when the new one's first event arrives. False: the test
// cannot go on (the object stays, held by a finalizer).
func (s *sim) recreate(kind ctrl.Kind, ns, name string) bool {
	if s.api.Get(kind, ns, name) == nil {
		return true
	}
	if _, err := s.api.Delete(kind, ns, name); err != nil {
		s.missing("The test deletes " + string(kind) + " " + name + " to create it again: " + err.Message)
		return false
	}
	if s.api.Get(kind, ns, name) != nil {
		s.missing("The test deletes " + string(kind) + " " + name + " to create it again, but a finalizer holds it.")
		return false
	}
	s.rec.Logf("user", "deleted ", string(kind), " ", name, " to create it again at once")
	s.gcHeld = true
	return true
}

// splitRef reads a step's reference to an object: "Kind/name" in the
// default namespace, or "Kind/namespace/name".
func splitRef(ref string) (kind ctrl.Kind, ns, name string) {
	k, rest, _ := strings.Cut(ref, "/")
	ns, name, ok := strings.Cut(rest, "/")
	if !ok {
		ns, name = "default", rest
	}
	return ctrl.Kind(k), ns, name
}

// resolveOwners fills the uid of owner references that name an existing
// owner, so tests can write ownerReferences without knowing uids.
func resolveOwners(o ctrl.Object, api *cluster.APIServer) ctrl.Object {
	o = ctrl.DeepCopy(o)
	m := o.GetObjectMeta()
	for j := range m.OwnerReferences {
		r := &m.OwnerReferences[j]
		if r.UID == "" {
			if owner := api.Get(ctrl.Kind(r.Kind), cluster.OrDefault(m.Namespace), r.Name); owner != nil {
				r.UID = owner.GetObjectMeta().UID
			}
		}
		if r.APIVersion == "" {
			r.APIVersion = ctrl.APIVersionOf(ctrl.Kind(r.Kind))
		}
	}
	return o
}

// describeObject says in a few words what a test's object is.
func describeObject(o ctrl.Object, m family.Family) string {
	var detail string
	// A model may say what matters to its exercise family instead.
	if d, ok := m.(family.Describer); ok {
		detail = d.Describe(o)
	}
	if detail == "" {
		switch x := o.(type) {
		case *ctrl.Deployment:
			ru := x.Spec.Strategy.RollingUpdate
			detail = "replicas " + text.Itoa(x.Spec.Replicas) + ", image " + ctrl.PodImage(&x.Spec.Template.Spec) +
				", maxSurge " + text.Itoa(ru.MaxSurge) + ", maxUnavailable " + text.Itoa(ru.MaxUnavailable)
		case *ctrl.Pod:
			detail = ctrl.PodImage(&x.Spec) + ", " + string(x.Status.Phase)
			if ctrl.IsPodReady(x) {
				detail += ", Ready"
			}
		}
	}
	// An object that starts out being deleted says so: a learner reading
	// the trace must see why a controller is to leave it alone.
	if o.GetObjectMeta().DeletionTimestamp != nil {
		detail = strings.TrimPrefix(detail+", being deleted", ", ")
	}
	s := string(o.GetObjectKind()) + " " + o.GetObjectMeta().Name
	if detail != "" {
		s += " (" + detail + ")"
	}
	return s
}
