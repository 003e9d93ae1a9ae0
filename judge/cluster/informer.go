package cluster

import (
	"sort"

	"ctrljudge/judge/ctrl"
)

// Informer is the controller's cache of the cluster, as client-go's
// shared informer keeps it. Reads come from here; events reach it only
// when the simulation delivers them, so a controller does not see its own
// writes until its reconcile returns, and not even then while the
// stale-read fault holds them back.
type Informer struct {
	cache   map[string]ctrl.Object
	pending []WatchEvent    // not yet delivered
	own     []WatchEvent    // from the current reconcile's writes
	held    []WatchEvent    // stale-read: held back one reconcile
	heldFor map[string]bool // objects whose events are held, to keep their order
	Dropped int             // events lost since the last resync
}

func NewInformer() *Informer { return &Informer{cache: map[string]ctrl.Object{}} }

// Observe takes an event from the API server. The controller's own writes
// wait for its reconcile to end.
func (in *Informer) Observe(ev WatchEvent, byController bool) {
	if byController {
		in.own = append(in.own, ev)
	} else {
		in.pending = append(in.pending, ev)
	}
}

// Deliver applies the pending events to the cache, in order, and hands
// each one that is not held back to notify, which enqueues its requests.
func (in *Informer) Deliver(notify func(WatchEvent)) {
	evs := in.pending
	in.pending = nil
	for _, ev := range evs {
		key := KeyOf(ev.Object)
		if in.heldFor[key] {
			// The informer sees each object's states in order: while one
			// is held back, so are the ones after it.
			in.held = append(in.held, ev)
			continue
		}
		if ev.Type == EvDeleted {
			delete(in.cache, key)
		} else {
			in.cache[key] = ev.Object
		}
		notify(ev)
	}
}

// Reconciled passes the ended reconcile's own events on, after whatever
// was held back before. When stale says so (asked only if the reconcile
// wrote anything), they are held back one more reconcile instead, and
// reconciled reports it.
func (in *Informer) Reconciled(stale func() bool) bool {
	own := in.own
	in.own = nil
	in.Release()
	if len(own) > 0 && stale() {
		in.held = own
		in.heldFor = map[string]bool{}
		for _, ev := range own {
			in.heldFor[KeyOf(ev.Object)] = true
		}
		return true
	}
	in.pending = append(in.pending, own...)
	return false
}

// Crashed passes on the events of a reconcile that never returned: the
// process is gone, but what it wrote stays written.
func (in *Informer) Crashed() {
	in.pending = append(in.pending, in.own...)
	in.own = nil
}

// Release delivers what stale-read held back with the next delivery.
func (in *Informer) Release() {
	in.pending = append(in.held, in.pending...)
	in.held, in.heldFor = nil, nil
}

// Holding says whether stale-read holds events back.
func (in *Informer) Holding() bool { return len(in.held) > 0 }

// Pending are the events taken and not yet delivered (those a stale read
// holds back are not among them).
func (in *Informer) Pending() []WatchEvent { return in.pending }

// Resync rebuilds the cache from the server, as a starting controller's
// initial list does; events in flight are then old news.
func (in *Informer) Resync(api *APIServer) {
	in.cache = map[string]ctrl.Object{}
	for _, key := range api.SortedKeys() {
		in.cache[key] = ctrl.DeepCopy(api.Objs[key])
	}
	in.pending, in.held, in.own, in.heldFor = nil, nil, nil, nil
}

// Get answers a controller's Get from the cache.
func (in *Informer) Get(c ctrl.Call) ctrl.Reply {
	if ctrl.NewObject(c.Kind) == nil {
		return ctrl.Reply{Err: APIErr(404, ctrl.ReasonNotFound, "the server could not find the requested resource (kind "+string(c.Kind)+")")}
	}
	o := in.cache[objKey(c.Kind, OrDefault(c.Key.Namespace), c.Key.Name)]
	if o == nil {
		return ctrl.Reply{Err: notFound(c.Kind, c.Key.Name)}
	}
	return ctrl.Reply{Object: o}
}

// List answers a controller's List from the cache, in key order.
func (in *Informer) List(c ctrl.Call) ctrl.Reply {
	keys := make([]string, 0, len(in.cache))
	for k := range in.cache {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var items []ctrl.Object
	for _, k := range keys {
		o := in.cache[k]
		m := o.GetObjectMeta()
		if o.GetObjectKind() != c.Kind || c.Namespace != "" && m.Namespace != c.Namespace {
			continue
		}
		match := true
		for lk, lv := range c.Labels {
			if v, ok := m.Labels[lk]; !ok || v != lv {
				match = false
			}
		}
		if c.OwnerUID != "" {
			ref := ctrl.GetControllerOf(o)
			match = match && ref != nil && ref.UID == c.OwnerUID
		}
		if match {
			items = append(items, o)
		}
	}
	return ctrl.Reply{Items: items}
}
