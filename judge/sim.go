package judge

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

const (
	// MaxStepsPerReconcile and MaxStepsPerTest are the learner's work
	// budget, in steps of their own code (function entries, loop
	// iterations, gotos; see sandbox/fuel.go). Counting steps rather than
	// seconds makes the verdict the same on an idle and a busy machine.
	// The reference solutions take a few thousand steps per test; a
	// Reconcile with a million cheap operations stays well inside both.
	MaxStepsPerReconcile = 5_000_000
	MaxStepsPerTest      = 50_000_000
	// reconcileWallNet bounds one Reconcile call in wall-clock time. It is
	// a safety net, never a verdict: the step budget above is spent long
	// before it on any machine, so when it fires the machine was starved
	// and the submission is not judged.
	reconcileWallNet = 60 * time.Second
	// maxCallsPerReconcile bounds the host calls of one Reconcile: a
	// deterministic work budget, since wazero has no instruction fuel.
	maxCallsPerReconcile = 2000
	// idleHorizon is how far the virtual clock may run ahead to serve
	// delayed requeues before a phase counts as idle.
	idleHorizon = 10 * time.Minute
	// maxOutputBytes caps what one test keeps of the controller's output;
	// maxOutputFlood stops a controller that writes far more.
	maxOutputBytes = 16 << 10
	maxOutputFlood = 64 << 10
)

// epoch is the virtual clock's zero.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	errCrash = errors.New("crash injected")      // stops the module: a simulated crash
	errStop  = errors.New("test already failed") // stops the module: an oracle failed mid-call
)

// failure is the first oracle that failed in a test.
type failure struct {
	oracle  verdict.Oracle
	message string
}

// sim runs one test: the simulated cluster, the learner's controller in
// its sandbox, and the faults. Everything it does is a function of the test
// and the seed.
type sim struct {
	ctx      context.Context
	fileName string // the learner's, for stack traces
	suite    *Suite
	test     *Test
	model    model
	world    *world
	rng      *rand.Rand
	faults   map[verdict.Fault]bool // classes enabled by the test
	fired    map[verdict.Fault]int  // how often each fired
	chance   map[verdict.Fault]int  // opportunities each has had
	sure     map[verdict.Fault]int  // the opportunity at which each fires for sure
	faulty   bool                   // in the faulty phase

	clock    time.Duration // since epoch
	api      *apiServer
	actor    string                 // who is writing, for the trace
	cache    map[string]ctrl.Object // the informer's view
	pending  []watchEvent           // not yet delivered to the informer
	held     []watchEvent           // stale-read: held back one reconcile
	heldFor  map[string]bool        // objects whose events are held, to keep their order
	own      []watchEvent           // events from the current reconcile's writes
	queue    *workqueue
	timers   []timer
	timerSeq int
	dropped  int // events missed since the last resync
	traffic  int // bytes of the controller's calls and their replies, against maxTrafficBytes

	// newController starts a controller process; ctl is the live one,
	// nil after a crash until the next reconcile starts another.
	newController func(*sim) (controller, error)
	ctl           controller
	out           *capWriter
	steps         *sandbox.StepBudget // the learner's work in this test, across restarts

	reconciles int
	rec        struct {
		n      int
		key    string
		calls  int
		writes int
		result *ctrl.Call
	}
	writeLog    []string
	lastErr     map[string]string
	trace       []verdict.TraceLine
	traceN      int
	timeline    []verdict.TimelinePoint
	faultLog    []string
	fail        *failure
	pendingMark verdict.Mark
}

type timer struct {
	at  time.Duration
	seq int
	do  func()
}

func newSim(ctx context.Context, newCtl func(*sim) (controller, error), s *Suite, t *Test, seed uint64) *sim {
	sm := &sim{
		ctx: ctx, suite: s, test: t, model: models[s.Model],
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		faults: map[verdict.Fault]bool{}, fired: map[verdict.Fault]int{}, chance: map[verdict.Fault]int{}, sure: map[verdict.Fault]int{},
		cache: map[string]ctrl.Object{}, queue: newWorkqueue(),
		newController: newCtl, out: &capWriter{max: maxOutputBytes},
		steps:   &sandbox.StepBudget{Max: MaxStepsPerTest},
		lastErr: map[string]string{},
	}
	for _, f := range t.Faults {
		sm.faults[f] = true
		sm.sure[f] = sm.rng.IntN(faultPolicies[f].sureWithin)
	}
	sm.api = newAPIServer(sm.rng, sm.now)
	sm.api.watch = sm.onWatch
	sm.world = &world{api: sm.api}
	return sm
}

func (s *sim) now() time.Time { return epoch.Add(s.clock) }

func (s *sim) logf(actor string, parts ...string) {
	s.traceN++
	s.trace = append(s.trace, verdict.TraceLine{Step: s.traceN, T: s.clock.Milliseconds(), Actor: actor, Event: clip(strings.Join(parts, ""), maxTraceEvent)})
	if len(s.trace) > 4*verdict.MaxTraceLines {
		s.trace = append(s.trace[:0], s.trace[len(s.trace)-verdict.MaxTraceLines:]...)
	}
}

// notJudged ends a test that a wall-clock safety net stopped: the machine
// was too busy to say anything about the code, so the engine turns the
// whole verdict into OutcomeNotJudged.
func (s *sim) notJudged() {
	s.failf(verdict.OracleNotJudged, "The judge ran out of real time before your code ran out of steps: the machine was too busy.")
}

// thousands writes n with thousands separators: 5,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (s *sim) failf(oracle verdict.Oracle, msg string) {
	if s.fail == nil {
		msg = clip(msg, maxMessageBytes)
		s.fail = &failure{oracle, msg}
		s.logf("judge", "✗ ", msg)
	}
}

// maybe decides whether fault class f fires now. Each planned fault fires
// for sure at one of its first few opportunities, so a test that plans it
// really exercises it, and at random after that.
func (s *sim) maybe(f verdict.Fault) bool {
	if !s.faulty || !s.faults[f] {
		return false
	}
	pol := faultPolicies[f]
	n := s.chance[f]
	s.chance[f]++
	if s.fired[f] >= pol.max {
		return false
	}
	if !(s.fired[f] == 0 && n == s.sure[f]) && s.rng.Float64() >= pol.p {
		return false
	}
	s.fired[f]++
	return true
}

func (s *sim) noteFault(class verdict.Fault, words string) {
	s.faultLog = append(s.faultLog, words)
	s.logf("fault", words)
	s.mark(verdict.MarkFault)
}

// ---- the world: API server events, informer, kubelet, garbage collector

func (s *sim) onWatch(ev watchEvent) {
	if s.actor == "controller" {
		s.own = append(s.own, ev)
	} else {
		s.pending = append(s.pending, ev)
	}
	if ev.Type == evAdded {
		if p, ok := ev.Object.(*ctrl.Pod); ok && p.Status.Phase == "" {
			s.startPod(p)
		}
	}
}

// startPod is the kubelet: a new Pod is Pending, then Running and Ready
// after PodReadyAfter.
func (s *sim) startPod(p *ctrl.Pod) {
	ns, name, uid := p.Namespace, p.Name, p.UID
	s.after(0, func() {
		if cur := s.api.get(ctrl.KindPod, ns, name); cur != nil && cur.GetObjectMeta().UID == uid && cur.(*ctrl.Pod).Status.Phase == "" {
			s.withActor("kubelet", func() { s.api.setPodStatus(ns, name, ctrl.PodStatus{Phase: ctrl.PodPending}) })
		}
	})
	s.after(time.Duration(s.suite.World.PodReadyAfter), func() {
		cur := s.api.get(ctrl.KindPod, ns, name)
		if cur == nil || cur.GetObjectMeta().UID != uid || cur.(*ctrl.Pod).Status.Phase != ctrl.PodPending {
			return
		}
		s.withActor("kubelet", func() {
			s.api.setPodStatus(ns, name, ctrl.PodStatus{Phase: ctrl.PodRunning,
				Conditions: []ctrl.PodCondition{{Type: ctrl.PodReady, Status: ctrl.ConditionTrue}}})
		})
		s.logf("kubelet", "Pod ", name, " is Running and Ready")
	})
}

func (s *sim) after(d time.Duration, do func()) {
	s.timerSeq++
	s.timers = append(s.timers, timer{s.clock + d, s.timerSeq, do})
	sort.Slice(s.timers, func(i, j int) bool {
		if s.timers[i].at != s.timers[j].at {
			return s.timers[i].at < s.timers[j].at
		}
		return s.timers[i].seq < s.timers[j].seq
	})
}

func (s *sim) withActor(a string, f func()) {
	prev := s.actor
	s.actor = a
	f()
	s.actor = prev
}

// settle lets the rest of the world act until it is quiet: the garbage
// collector deletes orphans and the kubelet's stages fire, the clock
// jumping to each; then events reach the informer and the queue.
func (s *sim) settle() {
	for {
		if orphans := s.api.orphans(); len(orphans) > 0 {
			for _, o := range orphans {
				m := o.GetObjectMeta()
				s.withActor("gc", func() { s.api.delete(o.GetObjectKind(), m.Namespace, m.Name) })
				s.logf("gc", "deleted ", string(o.GetObjectKind()), " ", m.Name, " (its owner is gone)")
			}
			continue
		}
		if len(s.timers) == 0 {
			break
		}
		t := s.timers[0]
		s.timers = s.timers[1:]
		if t.at > s.clock {
			s.clock = t.at
		}
		t.do()
	}
	s.deliver()
}

// deliver hands pending events to the informer: the cache takes the new
// state and the event's request goes to the queue.
func (s *sim) deliver() {
	evs := s.pending
	s.pending = nil
	for _, ev := range evs {
		key := keyOf(ev.Object)
		if s.heldFor[key] {
			// The informer sees each object's states in order: while one
			// is held back, so are the ones after it.
			s.held = append(s.held, ev)
			continue
		}
		if ev.Type == evDeleted {
			delete(s.cache, key)
		} else {
			s.cache[key] = ev.Object
		}
		reqs := s.requestsFor(ev.Object)
		if len(reqs) == 0 {
			continue
		}
		if s.maybe(verdict.FaultMissedEvent) {
			s.dropped++
			s.noteFault(verdict.FaultMissedEvent, "The "+strings.ToLower(string(ev.Type))+" event for "+string(ev.Object.GetObjectKind())+" "+
				ev.Object.GetObjectMeta().Name+" was lost on its way to your controller (the periodic resync will catch up).")
			continue
		}
		for _, req := range reqs {
			s.queue.add(req)
		}
	}
}

// requestFor maps an event's object to the key the controller reconciles.
// requestsFor maps an event's object to the keys the controller
// reconciles: its own for a For object, its controller's for an owned one,
// and every For object's for a watched kind.
func (s *sim) requestsFor(o ctrl.Object) []string {
	m := o.GetObjectMeta()
	c := &s.suite.Controller
	if o.GetObjectKind() == c.For {
		return []string{m.Namespace + "/" + m.Name}
	}
	if slices.Contains(c.Owns, o.GetObjectKind()) {
		if ref := ctrl.GetControllerOf(o); ref != nil && ref.Kind == string(c.For) {
			return []string{m.Namespace + "/" + ref.Name}
		}
	}
	if slices.Contains(c.Watches, o.GetObjectKind()) {
		var keys []string
		for _, key := range s.api.sortedKeys() {
			if f := s.api.objs[key]; f.GetObjectKind() == c.For {
				keys = append(keys, f.GetObjectMeta().Namespace+"/"+f.GetObjectMeta().Name)
			}
		}
		return keys
	}
	return nil
}

// resyncCache rebuilds the informer from the server, as a starting
// controller's initial list does.
func (s *sim) resyncCache() {
	s.cache = map[string]ctrl.Object{}
	for _, key := range s.api.sortedKeys() {
		s.cache[key] = ctrl.DeepCopy(s.api.objs[key])
	}
	s.pending, s.held, s.own, s.heldFor = nil, nil, nil, nil
}

// release delivers what stale-read held back.
func (s *sim) release() {
	s.pending = append(s.held, s.pending...)
	s.held, s.heldFor = nil, nil
}

func (s *sim) enqueueAll() {
	for _, o := range s.api.list(s.suite.Controller.For) {
		m := o.GetObjectMeta()
		s.queue.add(m.Namespace + "/" + m.Name)
	}
}

// ---- the controller

// controller is the learner's controller process.
type controller interface {
	// reconcile runs Reconcile once; an error is a *sandbox.Trap.
	reconcile(ctx context.Context) error
	close()
}

// wasmController runs the learner's module in the sandbox.
type wasmController struct{ inst *sandbox.Instance }

func startWasm(rt *sandbox.Runtime, mod *sandbox.Module) func(*sim) (controller, error) {
	return func(s *sim) (controller, error) {
		inst, err := mod.Instantiate(s.ctx, rt, s, sandbox.Limits{
			CallSteps: MaxStepsPerReconcile, Steps: s.steps, CallTimeout: reconcileWallNet,
			Output: s.out, MaxOutputBytes: maxOutputFlood, Clock: s.now})
		if err != nil {
			return nil, err
		}
		res, err := inst.Call(s.ctx, "ctrljudge_abi_version")
		if err != nil {
			return nil, err
		}
		if len(res) != 1 || int32(res[0]) != ctrl.ABIVersion {
			inst.Close(s.ctx)
			return nil, &sandbox.Trap{Kind: sandbox.TrapProtocol, Message: "the module was built against another version of the SDK"}
		}
		return &wasmController{inst}, nil
	}
}

func (w *wasmController) reconcile(ctx context.Context) error {
	_, err := w.inst.Call(ctx, "ctrljudge_reconcile")
	return err
}

func (w *wasmController) close() { w.inst.Close(context.Background()) }

// restart discards the controller's instance: everything it held in memory
// is gone. The next reconcile starts a fresh one, as a new process would,
// with a fresh cache and every object enqueued.
func (s *sim) restart() {
	if s.ctl != nil {
		s.ctl.close()
		s.ctl = nil
	}
	s.out.WriteString("--- controller restarted ---\n")
	s.queue.reset()
	s.resyncCache()
	s.enqueueAll()
}

// reconcile runs the learner's Reconcile once for key.
func (s *sim) reconcile(key string) {
	s.reconciles++
	s.rec.n, s.rec.key, s.rec.calls, s.rec.writes, s.rec.result = s.reconciles, key, 0, 0, nil
	s.logf("controller", "reconcile ", key, " (#", strconv.Itoa(s.reconciles), ")")
	if s.ctl == nil {
		ctl, err := s.newController(s)
		if err != nil {
			s.queue.done(key)
			s.trapped(err)
			return
		}
		s.ctl = ctl
	}
	err := s.ctl.reconcile(s.ctx)
	s.queue.done(key)
	if err != nil {
		s.ctl = nil // a trapped instance is discarded
		var trap *sandbox.Trap
		if errors.As(err, &trap) && errors.Is(trap.Err, errCrash) {
			// A crashed call returned no error: an earlier one must not
			// outlive it, or a key whose object the crashed call deleted
			// (and so never reconciled again) would seem to fail at rest.
			s.lastErr[key] = ""
			s.restartAfterCrash()
			return
		}
		s.trapped(err)
		return
	}
	if r := s.rec.result; r == nil {
		s.failf(verdict.OracleRuntime, "Reconcile returned without reporting a result to the judge.")
	} else if r.HasError {
		s.lastErr[key] = clip(r.Text, maxErrorText)
		d := s.queue.addRateLimited(key, s.clock)
		s.logf("controller", "returned error: ", clip(r.Text, maxTraceText), " (retry in ", d.String(), ")")
	} else {
		s.lastErr[key] = ""
		s.queue.forget(key)
		if r.RequeueAfter > 0 {
			s.queue.addAfter(key, s.clock, r.RequeueAfter)
			s.logf("controller", "done, requeue after ", r.RequeueAfter.String())
		} else if s.rec.writes == 0 {
			s.logf("controller", "done, no writes")
		}
	}
	s.afterReconcile(key)
}

// afterReconcile delivers the reconcile's own events and injects the
// faults that happen between reconciles.
func (s *sim) afterReconcile(key string) {
	own := s.own
	s.own = nil
	s.release()
	if len(own) > 0 && s.maybe(verdict.FaultStaleRead) {
		s.held = own
		s.heldFor = map[string]bool{}
		for _, ev := range own {
			s.heldFor[keyOf(ev.Object)] = true
		}
		s.noteFault(verdict.FaultStaleRead, "Your controller's cache will not show its own writes from reconcile #"+strconv.Itoa(s.rec.n)+" until after its next reconcile.")
	} else {
		s.pending = append(s.pending, own...)
	}
	s.sample(verdict.MarkNone)
	if s.maybe(verdict.FaultRestart) {
		s.noteFault(verdict.FaultRestart, "Restarted your controller after reconcile #"+strconv.Itoa(s.rec.n)+" of "+key+": its memory was wiped.")
		s.restart()
		return
	}
	if s.maybe(verdict.FaultDuplicate) {
		s.noteFault(verdict.FaultDuplicate, "Delivered "+key+" again with nothing changed after reconcile #"+strconv.Itoa(s.rec.n)+".")
		s.queue.add(key)
	}
}

func (s *sim) restartAfterCrash() {
	s.pending = append(s.pending, s.own...) // the process is gone; what it wrote stays written
	s.own = nil
	s.restart()
}

func (s *sim) trapped(err error) {
	var trap *sandbox.Trap
	if !errors.As(err, &trap) {
		if s.ctx.Err() != nil {
			s.notJudged()
			return
		}
		s.failf(verdict.OracleRuntime, "The judge could not run your controller: "+err.Error())
		return
	}
	if errors.Is(trap.Err, errStop) {
		return // an oracle already failed
	}
	switch trap.Kind {
	case sandbox.TrapPanic:
		s.failf(verdict.OracleRuntime, "Your controller panicked: "+learnerStack(trap.Message, learnerFrames(trap.Stack, s.fileName)))
	case sandbox.TrapFuel:
		if trap.Total {
			s.failf(verdict.OracleTimeout, "Your controller did more than "+thousands(trap.Steps)+" steps of work in this test, in "+
				plural(s.reconciles, "reconcile")+": each call is too slow, even if it ends.")
		} else {
			s.failf(verdict.OracleTimeout, "Reconcile #"+strconv.Itoa(s.rec.n)+" did more than "+thousands(trap.Steps)+" steps of work (an endless loop?).")
		}
	case sandbox.TrapTimeout:
		s.notJudged()
	case sandbox.TrapOutput:
		s.failf(verdict.OracleOutput, "Your controller wrote too much output: "+trap.Message+". Log less, or only when something changes.")
	case sandbox.TrapOutOfMemory:
		s.failf(verdict.OracleMemory, "Your controller ran out of memory: "+trap.Message+".")
	case sandbox.TrapExit:
		s.failf(verdict.OracleRuntime, "Your controller stopped the program: "+trap.Message+". Return from Reconcile instead of exiting.")
	case sandbox.TrapHost:
		s.failf(verdict.OracleRuntime, "Your controller sent the judge a request it could not understand: "+trap.Message)
	default:
		s.failf(verdict.OracleRuntime, "Your controller stopped: "+trap.Message)
	}
}

// learnerFrames keeps the stack frames in the learner's own code, naming
// the file as the learner does.
func learnerFrames(stack []string, fileName string) []string {
	var out []string
	for _, f := range stack {
		if strings.HasPrefix(f, "main.") && !strings.Contains(f, glueFile) {
			f = strings.ReplaceAll(f, "workspace/"+learnerPath, fileName)
			out = append(out, "    at "+f)
		}
	}
	return out
}

// ---- the host side of the ABI: every call from the learner's module

// HandleCall implements sandbox.Host.
func (s *sim) HandleCall(op uint32, msg []byte) ([]byte, error) {
	if s.fail != nil {
		return nil, errStop
	}
	if s.ctx.Err() != nil {
		return nil, s.ctx.Err()
	}
	s.rec.calls++
	if s.rec.calls > maxCallsPerReconcile {
		s.failf(verdict.OracleBudget, "Reconcile #"+strconv.Itoa(s.rec.n)+" made more than "+strconv.Itoa(maxCallsPerReconcile)+" calls to the cluster in one pass.")
		return nil, errStop
	}
	if s.charge(len(msg)) {
		return nil, errStop
	}
	if op == 0 || op >= uint32(ctrl.OpLimit) {
		return nil, errors.New("unknown operation " + strconv.Itoa(int(op)))
	}
	c, err := ctrl.DecodeCall(ctrl.Op(op), msg)
	if err != nil {
		return nil, err
	}
	var r ctrl.Reply
	switch c.Op {
	case ctrl.OpRequest:
		ns, name, _ := strings.Cut(s.rec.key, "/")
		r.Request = ctrl.Request{NamespacedName: ctrl.NamespacedName{Namespace: ns, Name: name}}
	case ctrl.OpNow:
		r.Now = s.now()
	case ctrl.OpLog:
		s.out.WriteString(c.Text)
		s.out.WriteString("\n")
	case ctrl.OpResult:
		s.rec.result = &c
	case ctrl.OpTooLarge:
		r = s.tooLarge(c)
	case ctrl.OpGet:
		r = s.cacheGet(c)
	case ctrl.OpList:
		r = s.cacheList(c)
	case ctrl.OpCreate, ctrl.OpUpdate, ctrl.OpUpdateStatus, ctrl.OpDelete:
		var stop error
		r, stop = s.write(c)
		if stop != nil {
			return nil, stop
		}
	}
	return s.reply(c.Op, &r)
}

func (s *sim) cacheGet(c ctrl.Call) ctrl.Reply {
	if ctrl.NewObject(c.Kind) == nil {
		return ctrl.Reply{Err: apiErr(404, ctrl.ReasonNotFound, "the server could not find the requested resource (kind "+string(c.Kind)+")")}
	}
	ns := c.Key.Namespace
	if ns == "" {
		ns = "default"
	}
	o := s.cache[objKey(c.Kind, ns, c.Key.Name)]
	if o == nil {
		return ctrl.Reply{Err: notFound(c.Kind, c.Key.Name)}
	}
	return ctrl.Reply{Object: o}
}

func (s *sim) cacheList(c ctrl.Call) ctrl.Reply {
	keys := make([]string, 0, len(s.cache))
	for k := range s.cache {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var items []ctrl.Object
	for _, k := range keys {
		o := s.cache[k]
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

var verbs = map[ctrl.Op]string{ctrl.OpCreate: "create", ctrl.OpUpdate: "update", ctrl.OpUpdateStatus: "update-status", ctrl.OpDelete: "delete"}

// write applies one controller write to the API server, then checks the
// safety invariants and decides whether to crash right after it.
func (s *sim) write(c ctrl.Call) (ctrl.Reply, error) {
	verb := verbs[c.Op]
	kind := c.Kind
	if c.Object != nil {
		kind = c.Object.GetObjectKind()
	}
	if (c.Op == ctrl.OpUpdate || c.Op == ctrl.OpUpdateStatus) && s.maybe(verdict.FaultConflict) {
		m := c.Object.GetObjectMeta()
		s.noteFault(verdict.FaultConflict, "Your "+verb+" of "+string(kind)+" "+m.Name+" in reconcile #"+strconv.Itoa(s.rec.n)+" lost a race with another writer (409 Conflict).")
		return ctrl.Reply{Err: apiErr(409, ctrl.ReasonConflict, "Operation cannot be fulfilled on "+string(kind)+" \""+m.Name+
			"\": the object has been modified; please apply your changes to the latest version and try again")}, nil
	}
	s.rec.writes++
	var before, after ctrl.Object
	var err *ctrl.StatusError
	s.withActor("controller", func() {
		switch c.Op {
		case ctrl.OpCreate:
			after, err = s.api.create(c.Object, false)
		case ctrl.OpUpdate, ctrl.OpUpdateStatus:
			m := c.Object.GetObjectMeta()
			before = s.api.get(kind, orDefault(m.Namespace), m.Name)
			after, err = s.api.update(c.Object, c.Op == ctrl.OpUpdateStatus)
		case ctrl.OpDelete:
			before, err = s.api.delete(c.Kind, c.Key.Namespace, c.Key.Name)
			after = before
		}
	})
	desc := verb + " " + string(kind)
	name := c.Key.Name
	if after != nil {
		name = after.GetObjectMeta().Name
		if d := clip(s.model.detail(after), maxDetail); d != "" {
			desc += " " + d
		}
	} else if c.Object != nil {
		name = c.Object.GetObjectMeta().Name
		if name == "" {
			name = c.Object.GetObjectMeta().GenerateName + "…"
		}
	}
	name = shown(name)
	if err != nil {
		s.writeLog = append(s.writeLog, desc+" (failed: "+err.Reason+")")
		s.logf("controller", verb, " ", string(kind), " ", name, " → ", err.Reason, ": ", err.Message)
		return ctrl.Reply{Err: err}, nil
	}
	s.writeLog = append(s.writeLog, desc)
	s.logf("controller", verb, " ", string(kind), " ", name, detailSuffix(clip(s.model.detail(after), maxDetail)))
	s.mark(verdict.MarkWrite)
	if v := s.model.checkWrite(s.world, &write{Verb: verb, Object: after, Before: before}); v != "" {
		s.failf(verdict.OracleSafety, v)
		return ctrl.Reply{}, errStop
	}
	if max := s.test.Expect.MaxPods; max > 0 {
		if n := len(s.api.list(ctrl.KindPod)); n > max {
			s.failf(verdict.OracleSafety, "After your "+verb+" of "+name+" the cluster had "+pods(n)+"; this test allows at most "+strconv.Itoa(max)+".")
			return ctrl.Reply{}, errStop
		}
	}
	if s.maybe(verdict.FaultCrashAfter) {
		s.noteFault(verdict.FaultCrashAfter, "Crashed your controller right after its "+ordinal(s.rec.writes)+" write in reconcile #"+
			strconv.Itoa(s.rec.n)+" ("+verb+" "+string(kind)+" "+name+"), then restarted it.")
		return ctrl.Reply{}, errCrash
	}
	if c.Op == ctrl.OpDelete {
		return ctrl.Reply{}, nil
	}
	return ctrl.Reply{Object: after}, nil
}

func detailSuffix(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}

func orDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// sample adds a timeline point, tagged with what happened since the last.
func (s *sim) sample(mark verdict.Mark) {
	s.mark(mark)
	d, a, r := s.model.sample(s.world)
	s.timeline = append(s.timeline, verdict.TimelinePoint{Step: len(s.timeline), T: s.clock.Milliseconds(), Desired: d, Actual: a, Ready: r, Mark: s.pendingMark})
	s.pendingMark = ""
}

// mark tags the current step for the timeline; a fault outranks a write,
// a write a user's change.
func (s *sim) mark(m verdict.Mark) {
	if m.Rank() > s.pendingMark.Rank() {
		s.pendingMark = m
	}
}

// capWriter keeps the first max bytes written and notes the overflow.
type capWriter struct {
	max       int
	b         []byte
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room < len(p) {
		if room > 0 {
			w.b = append(w.b, p[:room]...)
		}
		w.truncated = true
		return len(p), nil // keep the module running; the flag tells
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *capWriter) WriteString(s string) { w.Write([]byte(s)) }
