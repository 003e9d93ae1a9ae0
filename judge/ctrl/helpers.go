package ctrl

import "time"

// IsPodReady reports whether the Pod's Ready condition is True.
func IsPodReady(p *Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == PodReady {
			return c.Status == ConditionTrue
		}
	}
	return false
}

// PodImage returns the image of the Pod's first container, or "".
func PodImage(spec *PodSpec) string {
	if len(spec.Containers) == 0 {
		return ""
	}
	return spec.Containers[0].Image
}

// SetControllerReference makes owner the controller of obj, so that obj is
// garbage-collected with owner and found by List with OwnedBy(owner).
func SetControllerReference(owner, obj Object) {
	om, m := owner.GetObjectMeta(), obj.GetObjectMeta()
	ref := OwnerReference{
		APIVersion: apiVersionOf(owner.GetObjectKind()), Kind: string(owner.GetObjectKind()),
		Name: om.Name, UID: om.UID, Controller: true, BlockOwnerDeletion: true,
	}
	for i := range m.OwnerReferences {
		if m.OwnerReferences[i].Controller {
			m.OwnerReferences[i] = ref
			return
		}
	}
	m.OwnerReferences = append(m.OwnerReferences, ref)
}

// GetControllerOf returns obj's controller reference, or nil.
func GetControllerOf(obj Object) *OwnerReference {
	refs := obj.GetObjectMeta().OwnerReferences
	for i := range refs {
		if refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// IsControlledBy reports whether owner is obj's controller, by UID.
func IsControlledBy(obj, owner Object) bool {
	ref := GetControllerOf(obj)
	return ref != nil && ref.UID == owner.GetObjectMeta().UID
}

// ContainsFinalizer reports whether obj carries the finalizer f.
func ContainsFinalizer(obj Object, f string) bool {
	for _, x := range obj.GetObjectMeta().Finalizers {
		if x == f {
			return true
		}
	}
	return false
}

// AddFinalizer adds f to obj if missing and reports whether it changed obj.
func AddFinalizer(obj Object, f string) bool {
	if ContainsFinalizer(obj, f) {
		return false
	}
	m := obj.GetObjectMeta()
	m.Finalizers = append(m.Finalizers, f)
	return true
}

// RemoveFinalizer removes f from obj and reports whether it changed obj.
func RemoveFinalizer(obj Object, f string) bool {
	m := obj.GetObjectMeta()
	out := m.Finalizers[:0]
	for _, x := range m.Finalizers {
		if x != f {
			out = append(out, x)
		}
	}
	changed := len(out) != len(m.Finalizers)
	m.Finalizers = out
	return changed
}

// SetCondition puts c in conds, replacing the condition of the same Type,
// and reports whether that changed its Status, Reason, Message or
// ObservedGeneration (or added it), as apimachinery's
// meta.SetStatusCondition does. LastTransitionTime moves only when the
// condition is new or its Status changes: then it is c's, if set, or now;
// otherwise the stored time is kept, whatever c says.
func SetCondition(conds *[]Condition, c Condition, now time.Time) bool {
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = now
	}
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		changed := old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message ||
			old.ObservedGeneration != c.ObservedGeneration
		if old.Status != c.Status {
			old.LastTransitionTime = c.LastTransitionTime
		}
		old.Status, old.Reason, old.Message, old.ObservedGeneration = c.Status, c.Reason, c.Message, c.ObservedGeneration
		return changed
	}
	*conds = append(*conds, c)
	return true
}

// FindCondition returns the condition of type t in conds, or nil.
func FindCondition(conds []Condition, t string) *Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// APIVersionOf is the apiVersion of kind k's objects ("apps/v1"), as an
// owner reference to one carries it.
func APIVersionOf(k Kind) string { return apiVersionOf(k) }
