package judge

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
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

const (
	// MaxStepsPerReconcile and MaxStepsPerTest are the learner's work
	// budget, in steps of the whole module: every function call and jump
	// of their code, the SDK's, the library's and the Go runtime's, and
	// every KiB copied (sandbox/meter.go). Counting steps rather
	// than seconds makes the verdict the same on an idle and a busy
	// machine. The reference solutions and the corpus's correct files
	// take at most 4,828 steps in a Reconcile and 351,449 in a test, a
	// start of the controller (the Go runtime's) about 19,000 of them:
	// the budgets are 200 and 28 times that.
	MaxStepsPerReconcile = 1_000_000
	MaxStepsPerTest      = 10_000_000
	// MaxStepsPerSubmission bounds a whole submission's work, its tests'
	// in order (runTests) and the shrinking of its first failure: the
	// reference solutions take at most 2.7 million steps in all, and a
	// submission that runs out of steps in every test stops after 20.
	MaxStepsPerSubmission = 20_000_000
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
)

var (
	errCrash = errors.New("crash injected")      // stops the module: a simulated crash
	errStop  = errors.New("test already failed") // stops the module: an oracle failed mid-call
)

// failure is the first oracle that failed in a test.
type failure struct {
	oracle    verdict.Oracle
	message   string
	violation *verdict.Violation // a bound on a count the failing write broke
}

// sim runs one test. It owns one of each part of the simulated cluster
// (virtual clock, API server, informer, workqueue, kubelet, garbage
// collector), the fault plan, the ABI host that serves the learner's
// module, and the recorder, and it makes them take turns; phases.go says in
// which order. Everything it does is a function of the test and the seed.
type sim struct {
	ctx      context.Context
	fileName string // the learner's, for stack traces
	suite    *exercise.Suite
	test     *exercise.Test
	model    family.Family
	world    family.World
	seed     uint64
	picks    *rand.Rand // the workload steps' draws ("a random Pod"): the steps alone move it
	// random is the key of the controller's random bytes (RuntimeKey of
	// the submission's seed): the Go runtime's choices in its process.
	random uint64

	clock   *cluster.Clock
	api     *cluster.APIServer
	actor   string // who is writing; the informer holds back the controller's own events
	inf     *cluster.Informer
	queue   *cluster.Workqueue
	kubelet *cluster.Kubelet
	gc      *cluster.GarbageCollector
	faults  *faultPlan
	host    *host
	client  client // the controller's way to the API, faults and oracles wrapped around it
	rec     *cluster.Recorder

	// newController starts a controller process; ctl is the live one,
	// nil after a crash until the next reconcile starts another.
	newController func(*sim) (controller, error)
	ctl           controller
	steps         *sandbox.StepBudget // the learner's work in this test, across restarts
	slept         time.Duration       // waited by the Reconcile call under way
	starting      bool                // the controller's process is starting
	whole         bool                // controllers run the whole module, not a pruned one
	pruned        bool                // one called a function pruned from its module

	lastErr   map[string]string // each key's last reconcile's error, "" for none
	stepN     int               // workload steps applied so far
	meanwhile []lateEdit        // edits waiting for the controller's next write to their object
	fail      *failure
	diff      *differential // the comparison with the reference's run, if any
	gcHeld    bool          // the garbage collector waits for the controller's next call (recreate)
}

func newSim(ctx context.Context, newCtl func(*sim) (controller, error), s *exercise.Suite, t *exercise.Test, seed uint64) *sim {
	sm := &sim{
		ctx: ctx, suite: s, test: t, model: models[s.Model],
		seed:  seed,
		picks: stream(seed, "picks"),
		clock: &cluster.Clock{}, inf: cluster.NewInformer(), queue: cluster.NewWorkqueue(),
		newController: newCtl,
		steps:         &sandbox.StepBudget{Max: MaxStepsPerTest},
		lastErr:       map[string]string{},
	}
	sm.faults = newFaultPlan(seed, t.Faults)
	sm.api = cluster.NewAPIServer(stream(seed, "names"), sm.clock.Time)
	sm.api.Watch = sm.onWatch
	sm.api.By = func() string { return sm.actor }
	sm.world = sm.api
	sm.rec = cluster.NewRecorder(sm.clock)
	sm.host = &host{s: sm}
	sm.client = sm.newClient()
	sm.kubelet = &cluster.Kubelet{Clock: sm.clock, API: sm.api, Rec: sm.rec, ReadyAfter: time.Duration(s.World.PodReadyAfter),
		Mode: cmp.Or(t.PodReady, s.World.PodReady), As: sm.withActor, Missing: s.World.MissingImages}
	sm.gc = &cluster.GarbageCollector{API: sm.api, Rec: sm.rec, As: sm.withActor}
	return sm
}

// notJudged ends a test that a wall-clock safety net stopped: the machine
// was too busy to say anything about the code, so the engine turns the
// whole verdict into OutcomeNotJudged.
func (s *sim) notJudged() {
	s.failf(verdict.OracleNotJudged, "The judge ran out of real time before your code ran out of steps: the machine was too busy.")
}

// failf records the test's first failure; later ones are consequences.
func (s *sim) failf(oracle verdict.Oracle, msg string) {
	if s.fail == nil {
		msg = text.Clip(msg, text.MaxMessageBytes)
		s.fail = &failure{oracle: oracle, message: msg}
		s.rec.Logf("judge", "✗ ", msg)
	}
}

// noteFault writes down a fault that fired, for the verdict and the trace.
func (s *sim) noteFault(class verdict.Fault, words string) {
	s.faults.Note(words)
	s.diff.faultFired()
	s.rec.Logf("fault", words)
	s.rec.Note(verdict.MarkFault)
}

// ---- the world between reconciles

// onWatch takes every event of the API server: to the informer, and a new
// Pod to the kubelet.
func (s *sim) onWatch(ev cluster.WatchEvent) {
	s.inf.Observe(ev, s.actor == "controller")
	if ev.Type == cluster.EvAdded {
		if p, ok := ev.Object.(*ctrl.Pod); ok && p.Status.Phase == "" {
			s.kubelet.StartPod(p)
		}
	}
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
	for !s.gcHeld && s.gc.Collect() || s.clock.FireNext() {
	}
	s.inf.Deliver(s.notify)
}

// notify is the controller's event handler: an event the informer took
// enqueues the keys it maps to, unless the missed-event fault loses it.
func (s *sim) notify(ev cluster.WatchEvent) {
	reqs := s.requestsFor(ev.Object)
	if len(reqs) == 0 {
		return
	}
	if s.faults.maybe(verdict.FaultMissedEvent) {
		s.inf.Dropped++
		s.noteFault(verdict.FaultMissedEvent, "The "+strings.ToLower(string(ev.Type))+" event for "+string(ev.Object.GetObjectKind())+" "+
			ev.Object.GetObjectMeta().Name+" was lost on its way to your controller (the periodic resync will catch up).")
		return
	}
	for _, req := range reqs {
		s.queue.Add(req)
	}
}

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
		for _, key := range s.api.SortedKeys() {
			if f := s.api.Objs[key]; f.GetObjectKind() == c.For {
				keys = append(keys, f.GetObjectMeta().Namespace+"/"+f.GetObjectMeta().Name)
			}
		}
		return keys
	}
	return nil
}

func (s *sim) enqueueAll() {
	for _, o := range s.api.List(s.suite.Controller.For) {
		m := o.GetObjectMeta()
		s.queue.Add(m.Namespace + "/" + m.Name)
	}
}

// Sample adds a timeline point, tagged with what happened since the last.
func (s *sim) Sample(mark verdict.Mark) {
	s.rec.Note(mark)
	s.rec.Point(s.model.Sample(s.world))
}

func detailSuffix(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}

// stream is one of a test's independent random streams, named for what
// draws from it. What one part of the simulation draws never moves
// another's, so that the world a test's steps make does not depend on how
// many calls the controller made: the learner's run and the reference's
// see the same world, and the comparison between them can speak.
func stream(seed uint64, name string) *rand.Rand {
	return rand.New(rand.NewPCG(seed, mix(seed, name, 0)))
}

// mix hashes a seed, a name and a number into 64 bits: a draw that
// depends on nothing else (splitmix64 over FNV-1a).
func mix(seed uint64, name string, n uint64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	z := seed ^ h ^ (n+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit maps a draw to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }
