package judge

import (
	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"slices"
	"strconv"
	"time"
)

// A test's phases: the initial state, each workload step with the
// faults of the faulty phase, the quiet phase, then the oracles at rest
// (convergence, errors, idempotency, expected writes).

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
		if gap := time.Duration(s.suite.World.StepGap); gap > 0 {
			s.clock.AdvanceTo(s.clock.Now + gap)
		}
		s.landMeanwhile("", "", "", i)
		if w := time.Duration(t.Steps[i].Wait); w > 0 {
			// Time passes and nobody acts: only what falls due calls the
			// controller.
			s.stepN++
			s.rec.Logf("user", "nobody touches the cluster for ", w.String())
			s.wait(max, w, "during workload step "+strconv.Itoa(i+1))
			continue
		}
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
	s.landMeanwhile("", "", "", len(t.Steps)+1)
	// Quiet phase: no faults; the world must settle into the desired state.
	s.faults.on = false
	s.inf.Release()
	s.rec.Logf("judge", "quiet phase: no more faults")
	s.runUntilIdle(max, "in the quiet phase")
	s.rest(max)
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

// rest lets the clock run on for the world's restFor once the quiet phase
// is idle: no event comes meanwhile, so only a controller that asked to
// be called again acts on a deadline that passes.
func (s *sim) rest(budget int) {
	if d := time.Duration(s.suite.World.RestFor); d > 0 && s.fail == nil {
		s.wait(budget, d, "in the quiet phase")
		if s.fail == nil {
			s.rec.Logf("judge", "the clock ran on ", d.String(), " with nothing else to do")
		}
	}
}

// wait moves the clock on by d, serving the controller's delayed
// requeues that fall due on the way, each at its time.
func (s *sim) wait(budget int, d time.Duration, when string) {
	until := s.clock.Now + d
	for s.fail == nil {
		at, ok := s.queue.NextDelayed()
		if !ok || at > until {
			break
		}
		s.clock.AdvanceTo(at)
		s.runUntilIdle(budget, when)
	}
	if s.fail == nil {
		s.clock.AdvanceTo(until)
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
		if s.gcHeld {
			// Idle, and no call came: the garbage collector catches up.
			s.gcHeld = false
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
		if p := s.faultPod(verdict.FaultPodFailure, true); p != nil {
			s.withActor("kubelet", func() {
				s.api.SetPodStatus(p.Namespace, p.Name, cluster.FailedStatus())
			})
			s.noteFault(verdict.FaultPodFailure, "Pod "+p.Name+" failed (its container crashed for good).")
		}
	}
	if s.hasPod(false) && s.faults.maybe(verdict.FaultManualDelete) {
		if p := s.faultPod(verdict.FaultManualDelete, false); p != nil {
			s.withActor("user", func() { s.api.Delete(ctrl.KindPod, p.Namespace, p.Name) })
			s.noteFault(verdict.FaultManualDelete, "Someone deleted Pod "+p.Name+" by hand.")
		}
	}
	s.settle()
}
