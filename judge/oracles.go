package judge

import (
	"strconv"
	"strings"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The oracles that judge each call as it happens: the rules an exercise's
// statement makes about every Reconcile (brokeRules) and the checks of
// every stored write (writeOracles). The oracles at rest are in
// phases.go, the comparison with the reference in differential.go.

// writeOracles checks every write the API server stored, right after it:
// the exercise's rule on writes per call, other actors' metadata, the
// family's safety invariants and the test's bound on Pods. A write that
// breaks one fails the test and stops the module.
func (s *sim) writeOracles() interceptor {
	return writes(func(next callFunc, c *ctrl.Call) (ctrl.Reply, error) {
		r, err := next(c)
		if !stored(r, err) {
			return r, err
		}
		h, w := s.host, s.host.last
		if max := s.suite.Rules.WritesPerCall; max > 0 && len(h.stored) > max {
			s.failf(verdict.OracleWritesPerCall, "Reconcile #"+strconv.Itoa(h.n)+" of "+h.key+" made "+text.Plural(len(h.stored), "write")+": "+
				strings.Join(h.stored, ", ")+". This exercise allows "+text.Plural(max, "write")+" per call: return after it, and the event it causes brings your controller back.")
			return ctrl.Reply{}, errStop
		}
		if w.op == ctrl.OpUpdate && s.suite.Rules.KeepForeignMetadata {
			if loss, ok := s.api.LostForeign(w.before, w.after, s.suite.Rules.OwnKeys); ok {
				s.failf(verdict.OracleForeignMetadata, "Your update of "+string(w.kind)+" "+w.name+" in reconcile #"+strconv.Itoa(h.n)+" "+loss.Words()+
					". It was not yours to change: keep every entry you did not set, and write from a fresh read of the object.")
				return ctrl.Reply{}, errStop
			}
		}
		if msg, v := s.model.CheckWrite(s.world, &family.Write{Verb: w.verb, Object: w.after, Before: w.before, Now: s.clock.Time()}); msg != "" {
			s.violated(msg, v)
			return ctrl.Reply{}, errStop
		}
		if max := s.test.Expect.MaxPods; max > 0 {
			if n := len(s.api.List(ctrl.KindPod)); n > max {
				s.violated("After your "+w.verb+" of "+w.name+" the cluster had "+text.Pods(n)+"; this test allows at most "+strconv.Itoa(max)+".",
					&verdict.Violation{Line: verdict.LineActual, Value: n, Bound: max})
				return ctrl.Reply{}, errStop
			}
		}
		return r, err
	})
}

// brokeRules checks what a call returned against the exercise's rules,
// and fails the test if it broke one.
func (s *sim) brokeRules(key string, r *ctrl.Call) bool {
	rules, h := &s.suite.Rules, s.host
	n := strconv.Itoa(h.n)
	switch {
	case rules.NoMadeUpErrors && r.HasError && h.failed == 0:
		s.failf(verdict.OracleMadeUpError, "Reconcile #"+n+" of "+key+" returned the error \""+text.Clip(r.Text, text.MaxErrorText)+
			"\", but none of its calls to the cluster had failed. An error means \"this call went wrong, try again\"; "+
			"here nothing went wrong, so return nil.")
	case rules.PassOnConflicts && !r.HasError && len(h.conflicted) > 0:
		msg := "Reconcile #" + n + " of " + key + "'s write of " + h.conflicted[0] + " failed with a Conflict, and the call " +
			"returned no error, as if the write had happened. Return the error, so that the next call starts again from a fresh read."
		if !rules.RetryConflicts {
			msg = "Reconcile #" + n + " of " + key + "'s write of " + h.conflicted[0] + " failed with a Conflict, and the call " +
				"returned no error. This exercise asks for that error to be returned, even when a retry in the same call worked: " +
				"the next call then decides again from a fresh read, and the Conflict shows in the controller's error count."
		}
		s.failf(verdict.OracleSwallowedConflict, msg)
	case rules.PassOnErrors && !r.HasError && r.RequeueAfter == 0 && len(h.unanswered) > 0:
		s.failf(verdict.OracleSwallowedError, "In reconcile #"+n+" of "+key+", the "+h.unanswered[0]+" failed with a server error, and the call "+
			"returned no error, as if it had worked: the request is dropped until some other event brings it back. "+
			"Return the error, so that the request is tried again with growing delays.")
	case rules.PassOnErrors && !r.HasError && !rules.RequeueAnswersErrors && len(h.unanswered) > 0:
		s.failf(verdict.OracleSwallowedError, "In reconcile #"+n+" of "+key+", the "+h.unanswered[0]+" failed with a server error, and the call "+
			"returned no error but asked to be called again after "+r.RequeueAfter.String()+", as if nothing had gone wrong. "+
			"This exercise asks for the error to be returned: the request is then tried again with growing delays, and the failure shows in the controller's error count.")
	case rules.NoRequeue && r.RequeueAfter > 0:
		s.failf(verdict.OracleRequeue, "Reconcile #"+n+" of "+key+" asked to be called again after "+r.RequeueAfter.String()+
			" (RequeueAfter). This exercise's controller never requeues itself: the events of what it watches bring it back, so return an empty ctrl.Result.")
	default:
		return false
	}
	return true
}

// violated fails the test on a safety rule the write just logged broke,
// with the count and bound of v, if any, at that write's trace step.
func (s *sim) violated(msg string, v *verdict.Violation) {
	if s.fail != nil {
		return
	}
	if v != nil {
		v.Step = s.rec.Step()
	}
	s.failf(verdict.OracleSafety, msg)
	s.fail.violation = v
}
