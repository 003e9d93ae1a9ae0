package family

import (
	"ctrljudge/judge/ctrl"
	"strings"
)

// DescribePods lists Pods by name with their image and state.
func DescribePods(pods []*ctrl.Pod) string {
	if len(pods) == 0 {
		return "none"
	}
	var parts []string
	for _, p := range pods {
		s := p.Name + " " + ctrl.PodImage(&p.Spec)
		switch {
		case p.DeletionTimestamp != nil:
			s += " being deleted"
		case p.Status.Phase == ctrl.PodFailed:
			s += " Failed"
		case ctrl.IsPodReady(p):
			s += " Ready"
		default:
			s += " not Ready"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
