package judge

import (
	"strconv"
	"strings"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

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
		if v := s.model.CheckWrite(s.world, &family.Write{Verb: w.verb, Object: w.after, Before: w.before}); v != "" {
			s.failf(verdict.OracleSafety, v)
			return ctrl.Reply{}, errStop
		}
		if max := s.test.Expect.MaxPods; max > 0 {
			if n := len(s.api.List(ctrl.KindPod)); n > max {
				s.failf(verdict.OracleSafety, "After your "+w.verb+" of "+w.name+" the cluster had "+text.Pods(n)+"; this test allows at most "+strconv.Itoa(max)+".")
				return ctrl.Reply{}, errStop
			}
		}
		return r, err
	})
}
