package registry

import (
	"slices"
	"strings"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

const (
	// RegistryFinalizer is the finalizer exercise 173's controller owns.
	RegistryFinalizer = "ctrljudge.dev/registry"
	// RegistryNamespace and registryName locate the shared ConfigMap.
	RegistryNamespace = "default"
	RegistryName      = "registry"
)

// Family is the model: a shared ConfigMap, the registry, maps "namespace/name" of
// every live Deployment to its template's image. Nothing garbage-collects
// its entries, as with records in a system outside the cluster, so the
// controller guards each entry with a finalizer on its Deployment:
//
//   - an entry is written only for a Deployment that carries the finalizer;
//   - the finalizer comes off a Deployment only once its entry is gone;
//   - a registry write never drops the entry of a live Deployment that
//     carries the finalizer, and the registry itself is never deleted;
//   - other controllers' finalizers are left alone.
//
// At rest, every live Deployment carries the finalizer and its entry holds
// its image; no Deployment being deleted still carries the finalizer; and
// the registry lists nothing else.
type Family struct{}

// registryEntry is a Deployment's key in the registry.
func registryEntry(d *ctrl.Deployment) string { return d.Namespace + "/" + d.Name }

// registryOf returns the registry as stored, or nil.
func registryOf(w family.World) *ctrl.ConfigMap {
	if o := w.Get(ctrl.KindConfigMap, RegistryNamespace, RegistryName); o != nil {
		return o.(*ctrl.ConfigMap)
	}
	return nil
}

func isRegistry(o ctrl.Object) bool {
	m := o.GetObjectMeta()
	return o.GetObjectKind() == ctrl.KindConfigMap && cluster.OrDefault(m.Namespace) == RegistryNamespace && m.Name == RegistryName
}

// registryDeployment returns the stored Deployment an entry names, or nil.
func registryDeployment(w family.World, entry string) *ctrl.Deployment {
	ns, name, ok := strings.Cut(entry, "/")
	if !ok {
		return nil
	}
	if o := w.Get(ctrl.KindDeployment, ns, name); o != nil {
		return o.(*ctrl.Deployment)
	}
	return nil
}

func (Family) Detail(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.Deployment:
		if ctrl.ContainsFinalizer(x, RegistryFinalizer) {
			return x.Name + " with finalizer"
		}
		return x.Name + " without finalizer"
	case *ctrl.ConfigMap:
		return describeEntries(x.Data)
	}
	return ""
}

// Describe shows what matters here of a test's starting objects: images,
// finalizers and entries.
func (Family) Describe(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.Deployment:
		s := "image " + ctrl.PodImage(&x.Spec.Template.Spec)
		if len(x.Finalizers) == 0 {
			return s + ", no finalizers"
		}
		return s + ", finalizers " + strings.Join(x.Finalizers, " ")
	case *ctrl.ConfigMap:
		return describeEntries(x.Data)
	}
	return ""
}

// Hint replaces the hints written for exercise 171 where they would
// mislead here: this controller makes two writes in a call on purpose.
func (Family) Hint(oracle verdict.Oracle) string {
	switch oracle {
	case verdict.OracleSafety:
		return "Ask what a crash right after this write would leave behind: the finalizer goes on before the entry is written " +
			"and comes off only once the entry is gone; touch no entry and no finalizer but this Deployment's."
	case verdict.OracleConvergence:
		return "Check the state shown last against the rules. A registry write brings no new call, so a step left for later " +
			"may never come; and a Conflict must be returned or retried, never ignored."
	case verdict.OracleWrites:
		return "Compare your writes with the expected ones: the finalizer before the entry on the way in, " +
			"the entry before the finalizer on the way out, and nothing when all is in place."
	}
	return ""
}

// describeEntries renders a registry's data in key order, without commas:
// write lists are joined with them.
func describeEntries(data map[string]string) string {
	if len(data) == 0 {
		return "no entries"
	}
	parts := make([]string, 0, len(data))
	for _, k := range text.SortedKeys(data) {
		parts = append(parts, k+"="+data[k])
	}
	return strings.Join(parts, " ")
}

func (Family) Converged(w family.World) (bool, string) {
	reg := registryOf(w)
	if reg == nil {
		return false, "The registry ConfigMap " + RegistryNamespace + "/" + RegistryName + " no longer exists."
	}
	live := map[string]bool{}
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		entry := registryEntry(d)
		has := ctrl.ContainsFinalizer(d, RegistryFinalizer)
		if d.DeletionTimestamp != nil {
			if has {
				why := "Deployment " + d.Name + " was deleted but is still there: the API server waits for your controller to remove the finalizer " + RegistryFinalizer
				if _, listed := reg.Data[entry]; listed {
					return false, why + ", after removing the entry " + entry + " that the registry still holds."
				}
				return false, why + ". Its entry is already gone, so nothing holds the finalizer back any more."
			}
			continue
		}
		live[entry] = true
		if !has {
			return false, "Deployment " + d.Name + " does not carry the finalizer " + RegistryFinalizer +
				", so nothing would stop it from being deleted before its registry entry."
		}
		img := ctrl.PodImage(&d.Spec.Template.Spec)
		got, ok := reg.Data[entry]
		switch {
		case !ok:
			return false, "The registry has no entry for " + entry + "; it should be " + entry + "=" + img + "."
		case got != img:
			return false, "The registry lists " + entry + "=" + got + ", but the Deployment's template asks for image " + img + "."
		}
	}
	for _, entry := range text.SortedKeys(reg.Data) {
		if !live[entry] {
			return false, "The registry still lists " + entry + "=" + reg.Data[entry] + ", but no such Deployment is left: the entry is orphaned."
		}
	}
	return true, ""
}

func (Family) checkWrite(w family.World, wr *family.Write) string {
	switch x := wr.Object.(type) {
	case *ctrl.Deployment:
		if wr.Verb != "update" || wr.Before == nil {
			return ""
		}
		before := wr.Before.(*ctrl.Deployment)
		for _, f := range before.Finalizers {
			if f != RegistryFinalizer && !slices.Contains(x.Finalizers, f) {
				return "Your update of Deployment " + x.Name + " removed the finalizer " + f +
					", which belongs to another controller: remove only " + RegistryFinalizer + "."
			}
		}
		if !ctrl.ContainsFinalizer(before, RegistryFinalizer) || ctrl.ContainsFinalizer(x, RegistryFinalizer) {
			return ""
		}
		entry := registryEntry(x)
		if reg := registryOf(w); reg != nil {
			if img, ok := reg.Data[entry]; ok {
				return "The finalizer came off " + x.Name + " while the registry still listed " + entry + "=" + img +
					": that entry is now orphaned for good. Remove the entry first, then the finalizer."
			}
		}
	case *ctrl.ConfigMap:
		if !isRegistry(x) {
			return ""
		}
		if wr.Verb == "delete" {
			return "Your controller deleted the registry ConfigMap itself. It is shared by every Deployment: " +
				"remove only the entry of the Deployment being deleted."
		}
		var old map[string]string
		if wr.Before != nil {
			old = wr.Before.(*ctrl.ConfigMap).Data
		}
		for _, entry := range text.SortedKeys(x.Data) {
			if v, ok := old[entry]; ok && v == x.Data[entry] {
				continue
			}
			d := registryDeployment(w, entry)
			if d == nil {
				return "Your write put " + entry + "=" + x.Data[entry] + " in the registry, but no Deployment " + entry +
					" exists: the entry is orphaned from the start."
			}
			if !ctrl.ContainsFinalizer(d, RegistryFinalizer) {
				return "Your write put " + entry + "=" + x.Data[entry] + " in the registry before Deployment " + d.Name +
					" carried the finalizer " + RegistryFinalizer + ". Were it deleted now, nothing would hold it back and the entry would be orphaned: add the finalizer first."
			}
		}
		for _, entry := range text.SortedKeys(old) {
			if _, ok := x.Data[entry]; ok {
				continue
			}
			if d := registryDeployment(w, entry); d != nil && d.DeletionTimestamp == nil && ctrl.ContainsFinalizer(d, RegistryFinalizer) {
				return "Your write dropped " + entry + " from the registry, but Deployment " + d.Name +
					" is live and carries the finalizer: only a Deployment being deleted loses its entry."
			}
		}
	}
	return ""
}

// Sample: desired counts live Deployments, actual the registry's entries,
// ready the entries that are right and guarded by the finalizer.
func (Family) Sample(w family.World) (desired, actual, ready int) {
	reg := registryOf(w)
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.DeletionTimestamp != nil {
			continue
		}
		desired++
		if reg == nil || !ctrl.ContainsFinalizer(d, RegistryFinalizer) {
			continue
		}
		if img, ok := reg.Data[registryEntry(d)]; ok && img == ctrl.PodImage(&d.Spec.Template.Spec) {
			ready++
		}
	}
	if reg != nil {
		actual = len(reg.Data)
	}
	return desired, actual, ready
}

// CheckWrite implements family.Family; none of this family's rules is a
// bound on a count.
func (f Family) CheckWrite(w family.World, wr *family.Write) (string, *verdict.Violation) {
	return f.checkWrite(w, wr), nil
}
