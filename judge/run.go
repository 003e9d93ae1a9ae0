package judge

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/verdict"
)

// maxTestTime bounds one test in wall-clock time, MaxJudgeTime a whole
// submission. Both are safety nets, set far above what the step budgets
// allow on a loaded machine; when one fires the submission is not judged
// (OutcomeNotJudged), never failed.
const (
	maxTimelinePoints = 300
	maxTestTime       = 3 * time.Minute
	MaxJudgeTime      = 10 * time.Minute
)

// testSeed derives a test's seed from the submission's, by name, so a
// test replays alone (judge test --test NAME) exactly as within the suite.
func testSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := seed ^ h.Sum64()
	// splitmix64 finaliser
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// runTest runs one test: seed the cluster, start the controller, apply the
// workload with faults, then a quiet phase, then the oracles.
func runTest(ctx context.Context, newCtl func(*sim) (controller, error), ex *Exercise, t *Test, seed uint64, fileName string) verdict.TestResult {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, maxTestTime)
	defer cancel()
	s := newSim(ctx, newCtl, ex.Suite, t, testSeed(seed, t.Name))
	s.fileName = fileName
	defer func() {
		if s.ctl != nil {
			s.ctl.close()
		}
	}()
	s.faulty = len(t.Faults) > 0
	s.play(t)
	res := s.result(ex, t, seed)
	res.DurationMs = time.Since(start).Milliseconds()
	return res
}

func (s *sim) play(t *Test) {
	// The cluster as the test describes it, before the controller starts.
	s.withActor("user", func() {
		for _, o := range t.objects {
			if _, err := s.api.create(resolveOwners(o, s.api), true); err != nil {
				s.failf(verdict.OracleSetup, "The test's objects are invalid: "+err.Message)
			}
			s.logf("user", "the test starts with ", describeObject(o, s.model))
		}
	})
	s.settle()
	s.resyncCache()
	s.enqueueAll()
	s.sample(verdict.MarkNone)
	max := s.suite.World.MaxReconciles
	s.runUntilIdle(max, "while the controller set up the initial state")
	for i := 0; i < len(t.Steps) && s.fail == nil; i++ {
		s.applyStep(&t.Steps[i])
		for i+1 < len(t.Steps) && s.maybe(verdict.FaultCoalesce) {
			i++
			s.noteFault(verdict.FaultCoalesce, "Applied workload step "+strconv.Itoa(i+1)+" right after step "+strconv.Itoa(i)+
				", so your controller sees only their combined effect.")
			s.applyStep(&t.Steps[i])
		}
		s.runUntilIdle(max, "after workload step "+strconv.Itoa(i+1))
	}
	if s.fail != nil {
		return
	}
	// Quiet phase: no faults; the world must settle into the desired state.
	s.faulty = false
	s.release()
	s.logf("judge", "quiet phase: no more faults")
	s.runUntilIdle(max, "in the quiet phase")
	if s.fail != nil {
		return
	}
	if ok, why := s.model.converged(s.world); !ok {
		s.failf(verdict.OracleConvergence, "The cluster did not reach the desired state. "+why)
		return
	}
	for _, key := range sortedKeys(s.lastErr) {
		if e := s.lastErr[key]; e != "" {
			s.failf(verdict.OracleErrors, "Reconcile of "+key+" kept returning an error once the cluster was at rest: "+e)
			return
		}
	}
	// Idempotency: one more pass over every object, nothing changed.
	writes := len(s.writeLog)
	s.logf("judge", "idempotency check: reconcile everything again")
	s.enqueueAll()
	s.runUntilIdle(max, "during the idempotency check")
	if s.fail != nil {
		return
	}
	if n := len(s.writeLog) - writes; n > 0 {
		s.failf(verdict.OracleIdempotency, "Once the cluster had converged, reconciling again with nothing changed made "+
			plural(n, "write")+": "+joinList(s.writeLog[writes:], maxMessageBytes/2)+". A converged controller must make none.")
		return
	}
	if ok, why := s.model.converged(s.world); !ok {
		s.failf(verdict.OracleConvergence, "The cluster left the desired state after a further reconcile. "+why)
		return
	}
	if want := t.Expect.Writes; want != nil && !slices.Equal(want, s.writeLog) {
		s.failf(verdict.OracleWrites, "Expected exactly these writes: "+listOrNone(want)+". Your controller made: "+joinList(s.writeLog, maxMessageBytes/2)+".")
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runUntilIdle runs the controller until the queue is empty, the world is
// quiet and no requeue is due within idleHorizon, or the budget is spent.
func (s *sim) runUntilIdle(budget int, when string) {
	startClock := s.clock
	start := s.reconciles
	for s.fail == nil {
		if s.ctx.Err() != nil {
			s.notJudged()
			return
		}
		s.settle()
		s.queue.promote(s.clock)
		if s.queue.len() > 0 {
			if s.reconciles-start >= budget {
				s.failf(verdict.OracleBudget, "Your controller was still busy after "+strconv.Itoa(budget)+" reconciles "+when+
					": it never settled (does it keep changing something, or requeue itself forever?).")
				return
			}
			s.worldFaults()
			key, _ := s.queue.get()
			s.reconcile(key)
			continue
		}
		if len(s.held) > 0 {
			// Idle, the informer catches up with what stale-read held
			// back: a stale window lasts until the next reconcile or until
			// the controller rests, whichever comes first.
			s.release()
			continue
		}
		if at, ok := s.queue.nextDelayed(); ok && at <= startClock+idleHorizon {
			s.clock = max(s.clock, at)
			continue
		}
		if s.dropped > 0 {
			period := time.Duration(s.suite.World.ResyncPeriod)
			s.clock = (s.clock/period + 1) * period
			s.dropped = 0
			s.logf("informer", "periodic resync: every object is reconciled again")
			s.enqueueAll()
			continue
		}
		return
	}
}

// worldFaults happen to the world between reconciles.
func (s *sim) worldFaults() {
	if s.maybe(verdict.FaultPodFailure) {
		if p := s.pickPod("random", true); p != nil {
			s.withActor("kubelet", func() {
				s.api.setPodStatus(p.Namespace, p.Name, ctrl.PodStatus{Phase: ctrl.PodFailed,
					Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionFalse}}})
			})
			s.noteFault(verdict.FaultPodFailure, "Pod "+p.Name+" failed (its container crashed for good).")
		}
	}
	if s.maybe(verdict.FaultManualDelete) {
		if p := s.pickPod("random", false); p != nil {
			s.withActor("user", func() { s.api.delete(ctrl.KindPod, p.Namespace, p.Name) })
			s.noteFault(verdict.FaultManualDelete, "Someone deleted Pod "+p.Name+" by hand.")
		}
	}
	s.settle()
}

// pickPod picks a Pod by name order or by the seed; running asks for a
// Running one.
func (s *sim) pickPod(how string, running bool) *ctrl.Pod {
	var cands []*ctrl.Pod
	for _, o := range s.api.list(ctrl.KindPod) {
		p := o.(*ctrl.Pod)
		if p.DeletionTimestamp == nil && (!running || p.Status.Phase == ctrl.PodRunning) {
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
	}
	return cands[s.rng.IntN(len(cands))]
}

func (s *sim) applyStep(st *Step) {
	s.withActor("user", func() {
		switch {
		case st.Apply != "":
			for _, o := range st.objects {
				o = resolveOwners(o, s.api)
				m := o.GetObjectMeta()
				if cur := s.api.get(o.GetObjectKind(), orDefault(m.Namespace), m.Name); cur != nil {
					o = ctrl.DeepCopy(o)
					o.GetObjectMeta().ResourceVersion = ""
					// Like kubectl apply: finalizers that controllers added
					// stay unless the manifest names its own.
					if o.GetObjectMeta().Finalizers == nil {
						o.GetObjectMeta().Finalizers = cur.GetObjectMeta().Finalizers
					}
					s.api.update(o, false)
					s.logf("user", "updated ", string(o.GetObjectKind()), " ", m.Name)
				} else {
					s.api.create(o, true)
					s.logf("user", "created ", string(o.GetObjectKind()), " ", m.Name)
				}
			}
		case st.Patch != nil:
			for _, ref := range sortedKeys(st.Patch) {
				kind, name, _ := strings.Cut(ref, "/")
				cur := s.api.get(ctrl.Kind(kind), "default", name)
				if cur == nil {
					s.failf(verdict.OracleSetup, "The test patches "+ref+", which does not exist.")
					return
				}
				next, err := mergePatch(cur, st.Patch[ref])
				if err != nil {
					s.failf(verdict.OracleSetup, "The test's patch of "+ref+" is invalid: "+err.Error())
					return
				}
				s.api.update(next, false)
				b, _ := json.Marshal(st.Patch[ref])
				s.logf("user", "patched ", ref, " with ", string(b))
			}
		case st.Delete != "":
			kind, name, _ := strings.Cut(st.Delete, "/")
			if kind == string(ctrl.KindPod) && (name == "first" || name == "last" || name == "random") {
				p := s.pickPod(name, false)
				if p == nil {
					s.failf(verdict.OracleSetup, "The test deletes a Pod, but there is none.")
					return
				}
				name = p.Name
			}
			if _, err := s.api.delete(ctrl.Kind(kind), "default", name); err != nil {
				s.failf(verdict.OracleSetup, "The test deletes "+st.Delete+": "+err.Message)
				return
			}
			s.logf("user", "deleted ", kind, " ", name)
		case st.Fail != "":
			_, how, _ := strings.Cut(st.Fail, "/")
			p := s.pickPod(how, true)
			if p == nil {
				s.failf(verdict.OracleSetup, "The test fails a Pod, but none is Running.")
				return
			}
			s.api.setPodStatus(p.Namespace, p.Name, ctrl.PodStatus{Phase: ctrl.PodFailed,
				Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionFalse}}})
			s.logf("user", "Pod ", p.Name, " failed")
		}
	})
	s.sample(verdict.MarkUser)
}

// resolveOwners fills the uid of owner references that name an existing
// owner, so tests can write ownerReferences without knowing uids.
func resolveOwners(o ctrl.Object, api *apiServer) ctrl.Object {
	o = ctrl.DeepCopy(o)
	m := o.GetObjectMeta()
	for j := range m.OwnerReferences {
		r := &m.OwnerReferences[j]
		if r.UID == "" {
			if owner := api.get(ctrl.Kind(r.Kind), orDefault(m.Namespace), r.Name); owner != nil {
				r.UID = owner.GetObjectMeta().UID
			}
		}
		if r.APIVersion == "" {
			r.APIVersion = "apps/v1"
		}
	}
	return o
}

// describeObject says in a few words what a test's object is.
func describeObject(o ctrl.Object, m model) string {
	s := string(o.GetObjectKind()) + " " + o.GetObjectMeta().Name
	// A model may say what matters to its exercise family instead.
	if d, ok := m.(interface{ describe(ctrl.Object) string }); ok && d.describe(o) != "" {
		return s + " (" + d.describe(o) + ")"
	}
	switch x := o.(type) {
	case *ctrl.Deployment:
		ru := x.Spec.Strategy.RollingUpdate
		s += " (replicas " + itoa(x.Spec.Replicas) + ", image " + ctrl.PodImage(&x.Spec.Template.Spec) +
			", maxSurge " + itoa(ru.MaxSurge) + ", maxUnavailable " + itoa(ru.MaxUnavailable) + ")"
	case *ctrl.Pod:
		state := string(x.Status.Phase)
		if ctrl.IsPodReady(x) {
			state += ", Ready"
		}
		s += " (" + ctrl.PodImage(&x.Spec) + ", " + state + ")"
	}
	return s
}

// result turns the run into a TestResult.
func (s *sim) result(ex *Exercise, t *Test, seed uint64) verdict.TestResult {
	r := verdict.TestResult{Name: t.Name, Status: verdict.StatusPass, Sample: t.Sample, Seed: seed,
		Reconciles: s.reconciles, Writes: len(s.writeLog)}
	r.Output = strings.ToValidUTF8(string(s.out.b), "\uFFFD")
	r.OutputTruncated = s.out.truncated
	if i := strings.Index(r.Output, "\ngoroutine "); i >= 0 && s.fail != nil {
		// The Go runtime's dump of every goroutine: the message already
		// has the panic and the learner's frames.
		r.Output = r.Output[:i+1] + "(the Go runtime's traceback is left out; the message above has your frames)\n"
	}
	for _, c := range verdict.Faults {
		if s.fired[c] > 0 {
			r.FaultClasses = append(r.FaultClasses, c)
		}
	}
	if s.fail == nil {
		return r
	}
	r.Status = s.fail.oracle.Status()
	r.Oracle = s.fail.oracle
	r.Message = s.fail.message
	r.Hint = r.Oracle.Hint()
	// A model may word a hint for its own exercise family.
	if h, ok := s.model.(interface{ hint(verdict.Oracle) string }); ok && h.hint(r.Oracle) != "" {
		r.Hint = h.hint(r.Oracle)
	}
	r.Faults = s.faultLog
	r.Replay = ReplayCommand(ex, t.Name, seed)
	r.Trace = s.trace
	if len(r.Trace) > verdict.MaxTraceLines {
		r.Trace = r.Trace[len(r.Trace)-verdict.MaxTraceLines:]
	}
	r.Timeline = s.timeline
	if len(r.Timeline) > maxTimelinePoints {
		// The end of a run explains it; this keeps a verdict small.
		r.Timeline = r.Timeline[len(r.Timeline)-maxTimelinePoints:]
	}
	return r
}

// ReplayCommand is the command that replays one test of an exercise.
func ReplayCommand(ex *Exercise, test string, seed uint64) string {
	return "judge test " + ex.ID() + " --seed " + strconv.FormatUint(seed, 10) + " --test " + shellQuote(test)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
