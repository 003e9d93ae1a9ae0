package judge

import (
	"context"
	"encoding/json"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// maxTestTime bounds one test in wall-clock time, MaxJudgeTime a whole
// submission. Both are safety nets, set far above what the step budgets
// allow on a loaded machine; when one fires the submission is not judged
// (OutcomeNotJudged), never failed.
const (
	maxTestTime  = 3 * time.Minute
	MaxJudgeTime = 10 * time.Minute
)

// runTest runs one test: seed the cluster, start the controller, apply the
// workload with faults, then a quiet phase, then the oracles.
func runTest(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string) verdict.TestResult {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, maxTestTime)
	defer cancel()
	// One budget for all the test's runs, so that no test costs more.
	steps := &sandbox.StepBudget{Max: MaxStepsPerTest}
	s := playTest(ctx, newCtl, ex, t, seed, fileName, nil, steps)
	// Seed-independent detection: a test that passed although a planned
	// class never fired where it could runs again with the class pinned
	// to an opportunity it had (see repin).
	pins := newFaultPins()
	for round := 0; s.fail == nil && round <= len(t.Faults) && repin(s, pins, t.SeedFor(seed), round); round++ {
		s = playTest(ctx, newCtl, ex, t, seed, fileName, pins, steps)
	}
	res := s.result(ex, t, seed)
	res.DurationMs = time.Since(start).Milliseconds()
	res.Steps = steps.Used()
	return res
}

// playTest plays one run of a test, its fault plan pinned by pins. A run
// whose controller called a function pruned from its module
// (sandbox/prune.go) is played again on the whole module: the same run,
// since until that call the two modules do the same.
// Its steps are spent from the test's budget, but a run on a pruned
// module that had to be played again spends nothing: what pruning left
// out never costs the learner.
func playTest(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, pins *faultPins, steps *sandbox.StepBudget) *sim {
	trial := *steps
	s := playOnce(ctx, newCtl, ex, t, seed, fileName, pins, false, &trial)
	if s.pruned {
		return playOnce(ctx, newCtl, ex, t, seed, fileName, pins, true, steps)
	}
	*steps = trial
	return s
}

func playOnce(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, pins *faultPins, whole bool, steps *sandbox.StepBudget) *sim {
	s := newSim(ctx, newCtl, ex.Suite, t, t.SeedFor(seed))
	s.steps = steps
	s.whole = whole
	s.fileName = fileName
	defer func() {
		if s.ctl != nil {
			s.ctl.close()
		}
	}()
	s.faults.pin(pins)
	s.faults.on = len(t.Faults) > 0
	d := s.startDifferential(ctx, ex, t, seed) // the reference solution's run, to compare with
	s.play(t)
	d.finish()
	return s
}

// runTests runs tests concurrently, one instance each, and reports them
// in order. The tests share the submission's budget of steps, spent in
// their order: once the tests before one have used it up, that one and
// those after it are not run.
func (e *Engine) runTests(ctx context.Context, mod *sandbox.Module, s Submission, tests []*exercise.Test, progress func(verdict.Event)) []verdict.TestResult {
	results := make([]verdict.TestResult, len(tests))
	done := make([]chan struct{}, len(tests))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	for i := range tests {
		done[i] = make(chan struct{})
	}
	// Tests start in their order, so that once the budget is spent only
	// those already running are stopped and thrown away.
	go func() {
		for i, t := range tests {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				defer close(done[i])
				if tctx.Err() == nil {
					results[i] = runTest(tctx, startWasm(e.rt, mod), s.Exercise, t, s.Seed, s.FileName)
				}
			}()
		}
	}()
	shrunk, used := false, 0
	var steps int64 // spent by the tests so far, in order
	spentBy := 0    // how many tests spent the budget; 0: not spent
	for i, t := range tests {
		if spentBy == 0 && steps >= MaxStepsPerSubmission {
			spentBy = i
		}
		if spentBy > 0 {
			// Those still running are stopped; what they did is not kept,
			// so the verdict does not depend on how far they got.
			stop()
			<-done[i]
			results[i] = notRun(t, s.Seed, steps, spentBy)
			used = keepWithin(&results[i], used, len(tests)-i-1)
			progress(verdict.Event{Phase: verdict.PhaseTest, Index: i + 1, Total: len(tests), Name: t.Name, Test: &results[i]})
			continue
		}
		progress(verdict.Event{Phase: verdict.PhaseRunning, Index: i + 1, Total: len(tests), Name: t.Name})
		<-done[i]
		steps += results[i].Steps
		if r := &results[i]; r.Status != verdict.StatusPass && !shrunk {
			// The first failure is the one a learner reads first: find the
			// fewest planned faults that still make it fail the same way.
			// It takes a slot like any test, so that no more instances
			// (each up to the sandbox's memory limit) run at once than
			// there are slots.
			shrunk = true
			sem <- struct{}{}
			var spent int64
			r.Shrunk, spent = shrink(ctx, startWasm(e.rt, mod), s.Exercise, t, s.Seed, s.FileName, r)
			steps += spent
			<-sem
		}
		if r := &results[i]; r.Status != verdict.StatusPass && t.Generated && r.Scenario == "" && r.Oracle != verdict.OracleNotJudged {
			// A later failing scenario is printed as it ran.
			tc := *t
			tc.Seed = t.SeedFor(s.Seed)
			tc.Name = t.Name + ", seed " + strconv.FormatUint(s.Seed, 10)
			r.Scenario = tc.YAML()
		}
		used = keepWithin(&results[i], used, len(tests)-i-1)
		progress(verdict.Event{Phase: verdict.PhaseTest, Index: i + 1, Total: len(tests), Name: t.Name, Test: &results[i]})
	}
	return results
}

// notRun is the result of a test the submission's budget left no room
// for: the first n tests took steps of work in all.
func notRun(t *exercise.Test, seed uint64, steps int64, n int) verdict.TestResult {
	return verdict.TestResult{Name: t.Name, Status: verdict.StatusError, Sample: t.Sample, Oracle: verdict.OracleTimeout,
		Seed: t.SeedFor(seed),
		Message: "Not run: a submission may do " + text.Thousands(MaxStepsPerSubmission) + " steps of work, and the first " + text.Plural(n, "test") +
			" did " + text.Thousands(steps) + ". Make each Reconcile do less, then submit again."}
}

// maxShrinkTrials bounds the runs one shrink makes, and maxShrinkSteps
// their work, so a failing submission costs at most that much more: a
// test that failed by running out of steps would otherwise be run out of
// them forty times more. The reference solutions' costliest test takes
// 290,671 steps, so ten such trials fit.
const (
	maxShrinkTrials = 40
	maxShrinkSteps  = 3_000_000
)

// shrink makes a failing test smaller while it still fails with the same
// oracle, as delta debugging does, trying each candidate once in a fixed
// order: for a generated scenario its steps, its objects and its replica
// counts, then (for any test) its planned faults. It stops after
// maxShrinkTrials runs. It returns nil when a written test loses no
// fault; a generated scenario always comes back with its YAML.
//
// It says, too, how many steps of the learner's the trials took: they
// stop once they have taken maxShrinkSteps.
func shrink(ctx context.Context, newCtl func(*sim) (controller, error), ex *exercise.Exercise, t *exercise.Test, seed uint64, fileName string, r *verdict.TestResult) (_ *verdict.Shrunk, steps int64) {
	if r.Oracle == verdict.OracleNotJudged || len(t.Faults) == 0 && !t.Generated {
		return nil, 0
	}
	best := *t
	best.Seed = t.SeedFor(seed) // the trials keep the test's choices whatever their name
	trials := 0
	try := func(c exercise.Test) bool {
		if trials >= maxShrinkTrials || steps >= maxShrinkSteps || ctx.Err() != nil || r.Oracle == verdict.OracleNotJudged {
			return false
		}
		// parse writes each step's objects: into steps of the trial's
		// own, not the suite's, which other judgements read meanwhile.
		c.Steps = slices.Clone(c.Steps)
		if c.Parse() != nil {
			return false
		}
		trials++
		rr := runTest(ctx, newCtl, ex, &c, seed, fileName)
		steps += rr.Steps
		if rr.Oracle == verdict.OracleNotJudged {
			// A trial the clock stopped says nothing; the verdict would
			// depend on the load, so the submission is not judged.
			r.Oracle = verdict.OracleNotJudged
			return false
		}
		if rr.Status != verdict.StatusPass && rr.Oracle == r.Oracle {
			best = c
			return true
		}
		return false
	}
	if t.Generated {
		for i := len(best.Steps) - 1; i >= 0; i-- {
			c := best
			c.Steps = slices.Delete(slices.Clone(best.Steps), i, i+1)
			try(c)
		}
		for i := len(exercise.SplitYAMLDocs(best.Objects)) - 1; i >= 0; i-- {
			docs := exercise.SplitYAMLDocs(best.Objects)
			c := best
			c.Objects = strings.Join(slices.Delete(docs, i, i+1), "\n---\n") + "\n"
			try(c)
		}
		for _, c := range fewerReplicas(best) {
			try(c)
		}
	}
	for _, f := range t.Faults {
		c := best
		c.Faults = slices.DeleteFunc(slices.Clone(best.Faults), func(x verdict.Fault) bool { return x == f })
		try(c)
	}
	if r.Oracle == verdict.OracleNotJudged || ctx.Err() != nil {
		return nil, steps
	}
	if !t.Generated {
		if len(best.Faults) == len(t.Faults) {
			return nil, steps
		}
		list := "none"
		if len(best.Faults) > 0 {
			list = text.JoinNames(best.Faults, ",")
		}
		return &verdict.Shrunk{Faults: best.Faults, Replay: exercise.ReplayCommand(ex, t.Name, seed) + " --faults " + list}, steps
	}
	best.Name = t.Name + ", seed " + strconv.FormatUint(seed, 10) + ", shrunk"
	r.Scenario = best.YAML()
	return &verdict.Shrunk{Faults: best.Faults, Replay: exercise.ScenarioCommand(ex)}, steps
}

var replicasRE = regexp.MustCompile(`replicas: (\d+)`)

// fewerReplicas proposes, for each replica count in the test's objects,
// apply steps and scale patches above 1, the same test with that count
// halved (rounding down), first to last.
func fewerReplicas(t exercise.Test) []exercise.Test {
	var out []exercise.Test
	half := func(n int) int { return n / 2 }
	for _, m := range replicasRE.FindAllStringSubmatchIndex(t.Objects, -1) {
		n, _ := strconv.Atoi(t.Objects[m[2]:m[3]])
		if n > 1 {
			c := t
			c.Objects = t.Objects[:m[2]] + strconv.Itoa(half(n)) + t.Objects[m[3]:]
			out = append(out, c)
		}
	}
	for i, st := range t.Steps {
		for ref, p := range st.Patch {
			spec, _ := p["spec"].(map[string]any)
			n, ok := asInt(spec["replicas"])
			if !ok || n <= 1 {
				continue
			}
			c := t
			c.Steps = slices.Clone(t.Steps)
			c.Steps[i].Patch = map[string]map[string]any{ref: {"spec": map[string]any{"replicas": half(n)}}}
			out = append(out, c)
		}
		if m := replicasRE.FindStringSubmatchIndex(st.Apply); m != nil {
			if n, _ := strconv.Atoi(st.Apply[m[2]:m[3]]); n > 1 {
				c := t
				c.Steps = slices.Clone(t.Steps)
				c.Steps[i].Apply = st.Apply[:m[2]] + strconv.Itoa(half(n)) + st.Apply[m[3]:]
				out = append(out, c)
			}
		}
	}
	return out
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		return int(x), x == float64(int(x))
	}
	return 0, false
}

func (s *sim) play(t *exercise.Test) {
	// The cluster as the test describes it, before the controller starts.
	s.withActor("user", func() {
		for _, o := range t.Parsed {
			if err := s.seedObject(o); err != nil {
				s.failf(verdict.OracleSetup, "The test's objects are invalid: "+err.Message)
			}
			s.rec.Logf("user", "the test starts with ", describeObject(o, s.model))
		}
	})
	s.settle()
	s.inf.Resync(s.api)
	s.enqueueAll()
	s.Sample(verdict.MarkNone)
	max := s.suite.World.MaxReconciles
	s.runUntilIdle(max, "while the controller set up the initial state")
	for i := 0; i < len(t.Steps) && s.fail == nil; i++ {
		s.landMeanwhile("", "", i)
		s.applyStep(&t.Steps[i])
		for i+1 < len(t.Steps) && s.faults.maybe(verdict.FaultCoalesce) {
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
	// An edit still waiting for the controller's write lands now.
	s.landMeanwhile("", "", len(t.Steps)+1)
	// Quiet phase: no faults; the world must settle into the desired state.
	s.faults.on = false
	s.inf.Release()
	s.rec.Logf("judge", "quiet phase: no more faults")
	s.runUntilIdle(max, "in the quiet phase")
	if s.fail != nil {
		return
	}
	if ok, why := s.model.Converged(s.world); !ok {
		s.failf(verdict.OracleConvergence, "The cluster did not reach the desired state. "+why)
		return
	}
	for _, key := range text.SortedKeys(s.lastErr) {
		if e := s.lastErr[key]; e != "" {
			s.failf(verdict.OracleErrors, "Reconcile of "+key+" kept returning an error once the cluster was at rest: "+e)
			return
		}
	}
	// Idempotency: one more pass over every object, nothing changed.
	writes := len(s.rec.Writes)
	s.rec.Logf("judge", "idempotency check: reconcile everything again")
	s.enqueueAll()
	s.runUntilIdle(max, "during the idempotency check")
	if s.fail != nil {
		return
	}
	if n := len(s.rec.Writes) - writes; n > 0 {
		s.failf(verdict.OracleIdempotency, "Once the cluster had converged, reconciling again with nothing changed made "+
			text.Plural(n, "write")+": "+text.JoinList(s.rec.Writes[writes:], text.MaxMessageBytes/2)+". A converged controller must make none.")
		return
	}
	if ok, why := s.model.Converged(s.world); !ok {
		s.failf(verdict.OracleConvergence, "The cluster left the desired state after a further reconcile. "+why)
		return
	}
	if want := t.Expect.Writes; want != nil && !slices.Equal(want, s.rec.Writes) {
		s.failf(verdict.OracleWrites, "Expected exactly these writes: "+text.ListOrNone(want)+". Your controller made: "+text.JoinList(s.rec.Writes, text.MaxMessageBytes/2)+".")
	}
}

// runUntilIdle runs the controller until the queue is empty, the world is
// quiet and no requeue is due within idleHorizon, or the budget is spent.
func (s *sim) runUntilIdle(budget int, when string) {
	startClock := s.clock.Now
	start := s.host.reconciles
	for s.fail == nil {
		if s.ctx.Err() != nil {
			s.notJudged()
			return
		}
		s.settle()
		s.queue.Promote(s.clock.Now)
		if s.queue.Len() > 0 {
			if s.host.reconciles-start >= budget {
				s.failf(verdict.OracleBudget, "Your controller was still busy after "+strconv.Itoa(budget)+" reconciles "+when+
					": it never settled (does it keep changing something, or requeue itself forever?).")
				return
			}
			s.worldFaults()
			key, _ := s.queue.Get()
			s.reconcile(key)
			continue
		}
		if s.inf.Holding() {
			// Idle, the informer catches up with what stale-read held
			// back: a stale window lasts until the next reconcile or until
			// the controller rests, whichever comes first.
			s.inf.Release()
			continue
		}
		if s.kubelet.ReadyNext() {
			// Pods that wait for the controller to be idle become Ready
			// one at a time.
			continue
		}
		if at, ok := s.queue.NextDelayed(); ok && at <= startClock+idleHorizon {
			s.clock.AdvanceTo(at)
			continue
		}
		if s.inf.Dropped > 0 {
			period := time.Duration(s.suite.World.ResyncPeriod)
			s.clock.Now = (s.clock.Now/period + 1) * period
			s.inf.Dropped = 0
			s.rec.Logf("informer", "periodic resync: every object is reconciled again")
			s.enqueueAll()
			continue
		}
		return
	}
}

// worldFaults happen to the world between reconciles.
func (s *sim) worldFaults() {
	// An opportunity is one where there is a Pod to act on: a class
	// that fired on nothing would count as tested without being.
	if s.hasPod(true) && s.faults.maybe(verdict.FaultPodFailure) {
		if p := s.pickPod("random", true); p != nil {
			s.withActor("kubelet", func() {
				s.api.SetPodStatus(p.Namespace, p.Name, cluster.FailedStatus())
			})
			s.noteFault(verdict.FaultPodFailure, "Pod "+p.Name+" failed (its container crashed for good).")
		}
	}
	if s.hasPod(false) && s.faults.maybe(verdict.FaultManualDelete) {
		if p := s.pickPod("random", false); p != nil {
			s.withActor("user", func() { s.api.Delete(ctrl.KindPod, p.Namespace, p.Name) })
			s.noteFault(verdict.FaultManualDelete, "Someone deleted Pod "+p.Name+" by hand.")
		}
	}
	s.settle()
}

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

// pickPodWhere picks, among the Pods not being deleted that ok accepts,
// one by name ("first", "last", or its name) or by the seed ("random").
func (s *sim) pickPodWhere(how string, ok func(*ctrl.Pod) bool) *ctrl.Pod {
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
		return cands[s.rng.IntN(len(cands))]
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
	kind, name, _ := strings.Cut(ref, "/")
	cur := s.api.Get(ctrl.Kind(kind), "default", name)
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

// edit is a meanwhile step's patch, waiting for its moment.
type lateEdit struct {
	ref   string // Kind/name
	patch map[string]any
	step  int // the step that armed it
}

// meanwhileEdits lands the test's edits waiting for a write to an object
// right before the controller's write to it.
func (s *sim) meanwhileEdits() interceptor {
	return writes(func(next callFunc, c *ctrl.Call) (ctrl.Reply, error) {
		if c.Object != nil {
			s.landMeanwhile(c.Object.GetObjectKind(), c.Object.GetObjectMeta().Name, 0)
		} else {
			s.landMeanwhile(c.Kind, c.Key.Name, 0)
		}
		return next(c)
	})
}

// landMeanwhile applies the waiting meanwhile edits of the object kind
// and name name, as another actor, right before a controller write to
// it. With kind "", before step i, it applies those that waited through
// a whole step for a write that never came.
func (s *sim) landMeanwhile(kind ctrl.Kind, name string, i int) {
	if len(s.meanwhile) == 0 {
		return
	}
	rest := s.meanwhile[:0]
	for _, e := range s.meanwhile {
		k, n, _ := strings.Cut(e.ref, "/")
		if kind != "" && (k != string(kind) || n != name) || kind == "" && e.step+1 >= i {
			rest = append(rest, e)
			continue
		}
		s.withActor("user", func() {
			if s.patch(e.ref, e.patch) && kind != "" {
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
				o = resolveOwners(o, s.api)
				m := o.GetObjectMeta()
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
				} else {
					if err := s.seedObject(o); err != nil {
						s.failf(verdict.OracleSetup, "The test's step creates an invalid object: "+err.Message)
						return
					}
					s.rec.Logf("user", "created ", string(o.GetObjectKind()), " ", m.Name)
				}
			}
		case st.Patch != nil:
			for _, ref := range text.SortedKeys(st.Patch) {
				if !s.patch(ref, st.Patch[ref]) {
					return
				}
			}
		case st.Meanwhile != nil:
			for _, ref := range text.SortedKeys(st.Meanwhile) {
				s.meanwhile = append(s.meanwhile, lateEdit{ref, st.Meanwhile[ref], s.stepN})
			}
			s.rec.Logf("user", "will edit ", strings.Join(text.SortedKeys(st.Meanwhile), ", "), " while your controller is busy")
		case st.Release != nil:
			for _, ref := range text.SortedKeys(st.Release) {
				kind, name, _ := strings.Cut(ref, "/")
				cur := s.api.Get(ctrl.Kind(kind), "default", name)
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
			kind, name, _ := strings.Cut(st.Delete, "/")
			if kind == string(ctrl.KindPod) && (name == "first" || name == "last" || name == "random") {
				p := s.pickPod(name, false)
				if p == nil {
					s.missing("The test deletes a Pod, but there is none.")
					return
				}
				name = p.Name
			}
			if _, err := s.api.Delete(ctrl.Kind(kind), "default", name); err != nil {
				s.missing("The test deletes " + st.Delete + ": " + err.Message)
				return
			}
			s.rec.Logf("user", "deleted ", kind, " ", name)
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
			r.APIVersion = "apps/v1"
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

// result turns the run into a TestResult.
func (s *sim) result(ex *exercise.Exercise, t *exercise.Test, seed uint64) verdict.TestResult {
	r := verdict.TestResult{Name: t.Name, Status: verdict.StatusPass, Sample: t.Sample, Seed: seed,
		Reconciles: s.host.reconciles, Writes: len(s.rec.Writes)}
	r.Output = strings.ToValidUTF8(string(s.rec.Out.Buf), "\uFFFD")
	r.OutputTruncated = s.rec.Out.Truncated
	if i := strings.Index(r.Output, "\ngoroutine "); i >= 0 && s.fail != nil {
		// The Go runtime's dump of every goroutine: the message already
		// has the panic and the learner's frames.
		r.Output = r.Output[:i+1] + "(the Go runtime's traceback is left out; the message above has your frames)\n"
	}
	r.FaultClasses = s.faults.classes()
	if s.fail == nil {
		return r
	}
	r.Status = s.fail.oracle.Status()
	r.Oracle = s.fail.oracle
	r.Message = s.fail.message
	r.Hint = r.Oracle.Hint()
	// A model may word a hint for its own exercise family.
	if h, ok := s.model.(family.Hinter); ok && h.Hint(r.Oracle) != "" {
		r.Hint = h.Hint(r.Oracle)
	}
	r.Faults = s.faults.log
	r.Replay = exercise.ReplayCommand(ex, t.Name, seed)
	r.Trace = s.rec.TraceTail()
	r.Timeline = s.rec.TimelineTail()
	return r
}
