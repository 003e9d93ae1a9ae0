package cluster

import (
	"slices"
	"sort"
	"strconv"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
)

// A light managedFields: the API server notes, per object, which labels,
// annotations, finalizers and owner references an actor other than the
// controller set, and who. The foreign-metadata oracle checks after each
// controller write that none of them was lost.

// MetaKey names one entry of an object's metadata.
type MetaKey struct {
	Field string // label, annotation, finalizer, owner reference
	Name  string
}

// metaFields are the fields tracked, in the order a loss is reported.
var metaFields = []string{"label", "annotation", "finalizer", "owner reference"}

// metaEntries lists an object's tracked entries with their values.
func metaEntries(o ctrl.Object) map[MetaKey]string {
	out := map[MetaKey]string{}
	if o == nil {
		return out
	}
	m := o.GetObjectMeta()
	for k, v := range m.Labels {
		out[MetaKey{"label", k}] = v
	}
	for k, v := range m.Annotations {
		out[MetaKey{"annotation", k}] = v
	}
	for _, f := range m.Finalizers {
		out[MetaKey{"finalizer", f}] = ""
	}
	for _, r := range m.OwnerReferences {
		out[MetaKey{"owner reference", r.Kind + " " + r.Name}] = r.UID
	}
	return out
}

// noteOwners records what actor changed between before (nil on create)
// and after: entries it set or changed become its own; entries it removed
// are no one's. The controller's own writes are not recorded.
func (s *APIServer) noteOwners(before, after ctrl.Object) {
	actor := s.By()
	if actor == "controller" || after == nil {
		return
	}
	uid := after.GetObjectMeta().UID
	was, now := metaEntries(before), metaEntries(after)
	own := s.Owners[uid]
	for k, v := range now {
		if old, ok := was[k]; !ok || old != v {
			if own == nil {
				own = map[MetaKey]string{}
				s.Owners[uid] = own
			}
			own[k] = actor
		}
	}
	for k := range was {
		if _, ok := now[k]; !ok {
			delete(own, k)
		}
	}
}

// metaLoss is a foreign entry a controller write removed or changed.
type metaLoss struct {
	Key      MetaKey
	Actor    string // who had set it
	was, now string
	Gone     bool
}

// LostForeign finds the first entry, in metaFields and name order, that an
// actor other than the controller set on before and that after no longer
// has as it was. Names in own are the controller's even when another
// actor set them.
func (s *APIServer) LostForeign(before, after ctrl.Object, own []string) (metaLoss, bool) {
	if before == nil || after == nil {
		return metaLoss{}, false
	}
	owners := s.Owners[before.GetObjectMeta().UID]
	if len(owners) == 0 {
		return metaLoss{}, false
	}
	was, now := metaEntries(before), metaEntries(after)
	keys := make([]MetaKey, 0, len(owners))
	for k := range owners {
		if _, ok := was[k]; ok && !slices.Contains(own, k.Name) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		fi, fj := slices.Index(metaFields, keys[i].Field), slices.Index(metaFields, keys[j].Field)
		if fi != fj {
			return fi < fj
		}
		return keys[i].Name < keys[j].Name
	})
	for _, k := range keys {
		v, ok := now[k]
		if !ok || v != was[k] {
			return metaLoss{Key: k, Actor: owners[k], was: was[k], now: v, Gone: !ok}, true
		}
	}
	return metaLoss{}, false
}

// Words says what the write did to the entry and who had set it.
func (l metaLoss) Words() string {
	what := "the " + l.Key.Field + " " + text.Shown(l.Key.Name)
	if l.Key.Field == "label" || l.Key.Field == "annotation" {
		what += "=" + strconv.Quote(text.Shown(l.was))
	}
	what += ", which " + actorWords(l.Actor) + " had set"
	switch {
	case l.Gone:
		return "removed " + what
	case l.Key.Field == "owner reference":
		return "changed " + what + " (it now points at another object)"
	}
	return "changed " + what + ", to " + strconv.Quote(text.Shown(l.now))
}

// actorWords names an actor as a learner reads it.
func actorWords(actor string) string {
	switch actor {
	case "user":
		return "the test's user"
	case OtherWriter:
		return "another writer"
	case "kubelet":
		return "the kubelet"
	case "gc":
		return "the garbage collector"
	}
	return "another actor"
}

// OtherWriter is the actor that changes an object just before the
// controller's update when the conflict fault fires.
const OtherWriter = "other-writer"
