package exercise

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"

	"sigs.k8s.io/yaml"
)

// Suite is an exercise's tests.yaml: data, not code.
type Suite struct {
	// Controller says what the learner's controller watches: events on
	// For objects enqueue their own key, events on Owns objects enqueue
	// their controller owner's key, and events on Watches objects enqueue
	// every For object (a shared object that all of them depend on).
	Controller struct {
		For     ctrl.Kind   `json:"for"`
		Owns    []ctrl.Kind `json:"owns"`
		Watches []ctrl.Kind `json:"watches"`
	} `json:"controller"`
	// Model names the exercise family, the Go model that knows the exercise's
	// desired state and safety invariants (judge/family, listed in
	// judge/models.go).
	Model string `json:"model"`
	World World  `json:"world"`
	Rules Rules  `json:"rules"`
	// ConflictEdits lists what the conflict fault's other writer may
	// change besides a label or an annotation of its own: "replicas"
	// scales a Deployment by one, a spec field the controller must leave
	// as it finds it.
	ConflictEdits []string `json:"conflictEdits,omitempty"`
	Tests         []*Test  `json:"tests"`
	// Reference says what the statement leaves free, which the
	// differential oracle does not compare with the reference solution.
	Reference Reference `json:"reference"`
	// Generate, if set, adds generated scenarios to a submit (generate.go).
	Generate *Generate `json:"generate,omitempty"`
	Mutants  []struct {
		File   string `json:"file"`   // mutants/NAME.patch (a diff against solution.go) or NAME.go
		Expect string `json:"expect"` // the oracle expected to reject it
	} `json:"mutants"`
}

// World sets the simulated cluster's timing.
type World struct {
	// PodReadyAfter is how long a new Pod takes to become Running and Ready.
	PodReadyAfter Duration `json:"podReadyAfter"`
	// ResyncPeriod is the informer's periodic resync.
	ResyncPeriod Duration `json:"resyncPeriod"`
	// MaxReconciles bounds each phase of a test (a hot loop ends there).
	MaxReconciles int `json:"maxReconciles"`
	// PodReady says when a new Pod becomes Ready: "soon" (the default:
	// PodReadyAfter later, before the controller's next call),
	// "when-idle" (Running at once, Ready only once the controller is
	// idle) or "never" (Running, Ready only when a test's ready step
	// says so). A test may say otherwise for itself.
	PodReady string `json:"podReady"`
	// StepGap is the virtual time that passes before each workload step,
	// once the controller has settled: people act a while apart, so that
	// what a controller stamps with the time shows when it was written.
	StepGap Duration `json:"stepGap,omitempty"`
	// MissingImages are images the registry does not have, as path.Match
	// patterns ("*:broken"): the kubelet leaves a Pod that runs one
	// Pending for ever (an image pull failure), never Ready.
	MissingImages []string `json:"missingImages,omitempty"`
	// RestFor is virtual time the clock runs on once the quiet phase is
	// idle, serving only what is due in it (the controller's delayed
	// requeues), before the oracles at rest: a deadline that falls in it
	// must have been acted on by then, though no event came.
	RestFor Duration `json:"restFor,omitempty"`
}

// Rules are the promises an exercise's statement makes about every
// Reconcile call, each checked by its own oracle in every test. A rule
// the statement does not make is not enforced.
type Rules struct {
	// WritesPerCall bounds the writes one call stores (0: no bound): "at
	// most one write per call". A write the API server refused stored
	// nothing and does not count.
	WritesPerCall int `json:"writesPerCall,omitempty"`
	// NoMadeUpErrors: a call returns an error only when one of its own
	// API calls failed (verdict.OracleMadeUpError).
	NoMadeUpErrors bool `json:"noMadeUpErrors,omitempty"`
	// PassOnConflicts: a call whose write failed with a Conflict returns
	// an error (verdict.OracleSwallowedConflict); with RetryConflicts, a
	// call that stored a write of that object after it need not: it read
	// the object again and retried.
	PassOnConflicts bool `json:"passOnConflicts,omitempty"`
	RetryConflicts  bool `json:"retryConflicts,omitempty"`
	// PassOnErrors: a call in which an API call failed with a server
	// error (the server-error fault), and that did not make the same call
	// again with success, returns an error (verdict.OracleSwallowedError);
	// with RequeueAnswersErrors, asking to be called again will do too.
	PassOnErrors         bool `json:"passOnErrors,omitempty"`
	RequeueAnswersErrors bool `json:"requeueAnswersErrors,omitempty"`
	// NoRequeue: a call never asks to be called again (RequeueAfter).
	NoRequeue bool `json:"noRequeue,omitempty"`
	// KeepForeignMetadata: labels, annotations, finalizers and owner
	// references another actor set survive the controller's writes
	// (verdict.OracleForeignMetadata).
	KeepForeignMetadata bool `json:"keepForeignMetadata,omitempty"`
	// OwnKeys are the label, annotation and finalizer names that are the
	// controller's own even when a test's objects already carry them,
	// such as its finalizer.
	OwnKeys []string `json:"ownKeys,omitempty"`
}

// Test is one scenario: initial objects, workload steps applied one after
// the other once the controller is idle, faults injected meanwhile, then a
// quiet phase with no faults, and the expectations checked.
type Test struct {
	Name    string `json:"name"`
	Sample  bool   `json:"sample"`
	Objects string `json:"objects"` // Kubernetes-style YAML manifests, "---" separated
	Steps   []Step `json:"steps"`
	// Faults injected during the faulty phase, by class name (see verdict.Faults).
	Faults []verdict.Fault `json:"faults"`
	Expect Expect          `json:"expect"`
	// SkipMissing skips a step whose object is not there (a Pod to fail
	// when none runs, say) instead of failing the test's setup.
	SkipMissing bool `json:"skipMissing,omitempty"`
	Generated   bool `json:"-"` // drawn by the generator: shrunk further and printed
	Regression  bool `json:"-"` // from the exercise's regressions folder
	// PodReady, if set, replaces the world's PodReady in this test.
	PodReady string `json:"podReady,omitempty"`
	// Seed, if set, is this test's own seed, whatever the submission's:
	// a shrunk generated scenario pasted from a verdict fails the same
	// way at every seed.
	Seed uint64 `json:"seed,omitempty"`
	// Runtime, if set, is the key of the Go runtime's choices in the
	// learner's module (map order, select): a scenario printed from a
	// verdict keeps the one it ran with, so that it replays them.
	Runtime uint64 `json:"runtime,omitempty"`

	Parsed []ctrl.Object `json:"-"` // Objects, parsed
}

// Step is one workload action, done once the controller is idle.
type Step struct {
	// Apply creates the object, or replaces its spec if it exists.
	Apply string `json:"apply,omitempty"`
	// Recreate, with Apply, deletes each object first and creates it
	// again from the manifest: a new object (a new UID) under the old
	// name, made before the garbage collector reaches what the old one
	// owned, which it collects only after the controller's next call.
	Recreate bool `json:"recreate,omitempty"`
	// Patch merges fields into an existing object: {"Deployment/web": {"spec": {"replicas": 1}}}.
	Patch map[string]map[string]any `json:"patch,omitempty"`
	// Delete removes objects: "Deployment/web", or "Pod/first", "Pod/last",
	// "Pod/random" for a Pod picked by name order or by the seed.
	Delete string `json:"delete,omitempty"`
	// Fail makes a Pod fail: "Pod/first", "Pod/last" or "Pod/random".
	Fail string `json:"fail,omitempty"`
	// Unready makes a Running Pod lose its Ready condition, as a failing
	// readiness probe does: "Pod/NAME", "Pod/first", "Pod/last" or
	// "Pod/random" (of the Ready ones). It stays Running.
	Unready string `json:"unready,omitempty"`
	// Ready makes a Running Pod that is not Ready Ready again: "Pod/NAME",
	// "Pod/first", "Pod/last", "Pod/random" or "Pod/all".
	Ready string `json:"ready,omitempty"`
	// Release removes finalizers that another controller holds, letting
	// the object go if it is being deleted and none is left:
	// {"Pod/web-0a": ["example.com/hold"]}.
	Release map[string][]string `json:"release,omitempty"`
	// Meanwhile is an edit by another actor that lands while the
	// controller is busy: right before the controller's next write to
	// that object (or at the next step, if none comes), so the write,
	// made from what the controller read, meets a newer object. Written
	// like patch: {"Deployment/web": {"metadata": {"labels": {"team": "a"}}}}.
	Meanwhile map[string]map[string]any `json:"meanwhile,omitempty"`
	// MeanwhileApply is a manifest another actor applies while the
	// controller is busy, as apply would: right before the controller's
	// next write to an object of that kind and name (such as its create
	// of an object by that name, which then fails with AlreadyExists), or
	// at the next step, if none comes.
	MeanwhileApply string `json:"meanwhileApply,omitempty"`
	// Wait lets this much virtual time pass with nothing done: the
	// controller is called only for what falls due meanwhile (its
	// delayed requeues), as when nobody touches the cluster for a while.
	Wait Duration `json:"wait,omitempty"`

	Parsed []ctrl.Object `json:"-"` // Apply or MeanwhileApply, parsed
}

// Expect lists the test's checks beyond those every test makes
// (convergence, idempotency, safety, no errors at rest).
type Expect struct {
	// Writes is the exact sequence of the controller's writes over the
	// whole test, each as "verb Kind detail" (the model renders detail;
	// for Pods, their image): ["create Pod v1", "delete Pod v1"].
	Writes []string `json:"writes,omitempty"`
	// MaxPods bounds the number of Pods that exist at any time.
	MaxPods int `json:"maxPods,omitempty"`
}

// Duration is a time.Duration written as "2s" in YAML.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q", s)
	}
	*d = Duration(v)
	return nil
}

// A Checker makes the checks of a suite that need the engine: the names
// tests.yaml takes from it (its model, the kubelet's modes, the
// generator's kinds). The engine passes its own (judge.Checks); loading
// exercises for the records and reports passes nil, and trusts the
// catalog the server checked.
type Checker interface {
	CheckSuite(s *Suite) error
	CheckTest(t *Test) error
}

// ParseSuite parses and validates a tests.yaml, with the engine's checks
// if c is not nil.
func ParseSuite(name string, b []byte, c Checker) (*Suite, error) {
	var s Suite
	if err := yaml.UnmarshalStrict(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if ctrl.NewObject(s.Controller.For) == nil {
		return nil, fmt.Errorf("%s: controller.for: unknown kind %q", name, s.Controller.For)
	}
	if s.World.PodReadyAfter == 0 {
		s.World.PodReadyAfter = Duration(2 * time.Second)
	}
	if s.World.ResyncPeriod == 0 {
		s.World.ResyncPeriod = Duration(10 * time.Minute)
	}
	if s.Rules.WritesPerCall < 0 {
		return nil, fmt.Errorf("%s: rules.writesPerCall: %d is negative", name, s.Rules.WritesPerCall)
	}
	for _, e := range s.ConflictEdits {
		if e != "replicas" {
			return nil, fmt.Errorf("%s: conflictEdits: unknown edit %q (known: replicas)", name, e)
		}
	}
	if s.World.MaxReconciles == 0 {
		s.World.MaxReconciles = 200
	}
	if s.World.PodReady == "" {
		s.World.PodReady = "soon"
	}
	if _, err := ParseReference(&s.Reference); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(s.Tests) == 0 {
		return nil, fmt.Errorf("%s: no tests", name)
	}
	samples := 0
	seen := map[string]bool{}
	for i, t := range s.Tests {
		where := fmt.Sprintf("%s: test %d (%s)", name, i+1, t.Name)
		if t.Name == "" || seen[t.Name] {
			return nil, fmt.Errorf("%s: a test needs a unique name", where)
		}
		if isGeneratedName(t.Name) {
			return nil, fmt.Errorf("%s: names \"generated N\" are kept for generated scenarios", where)
		}
		seen[t.Name] = true
		if t.Sample {
			samples++
		}
		if err := t.Parse(); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		if c != nil {
			if err := c.CheckTest(t); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
	}
	if c != nil {
		if err := c.CheckSuite(&s); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
	}
	if samples == 0 {
		return nil, fmt.Errorf("%s: no test is marked sample: true", name)
	}
	return &s, nil
}

// Parse checks a test and parses its manifests; the error says where.
func (t *Test) Parse() error {
	var err error
	if t.Parsed, err = ParseManifests(t.Objects); err != nil {
		return fmt.Errorf("objects: %v", err)
	}
	for _, f := range t.Faults {
		if !slices.Contains(verdict.Faults, f) {
			return fmt.Errorf("unknown fault %q (known: %s)", f, text.JoinNames(verdict.Faults, ", "))
		}
	}
	for j := range t.Steps {
		st := &t.Steps[j]
		n := 0
		for _, src := range []string{st.Apply, st.MeanwhileApply} {
			if src == "" {
				continue
			}
			n++
			if st.Parsed, err = ParseManifests(src); err != nil {
				return fmt.Errorf("step %d: %v", j+1, err)
			}
		}
		for _, set := range []bool{st.Patch != nil, st.Delete != "", st.Fail != "", st.Unready != "", st.Ready != "",
			st.Release != nil, st.Meanwhile != nil, st.Wait > 0} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("step %d: say exactly one of apply, patch, delete, fail, unready, ready, release, meanwhile, meanwhileApply, wait", j+1)
		}
		if st.Recreate && st.Apply == "" {
			return fmt.Errorf("step %d: recreate goes with apply", j+1)
		}
		for _, ref := range []string{st.Unready, st.Ready} {
			if kind, _, _ := strings.Cut(ref, "/"); ref != "" && kind != string(ctrl.KindPod) {
				return fmt.Errorf("step %d: unready and ready take a Pod (Pod/NAME, Pod/first, ...), not %q", j+1, ref)
			}
		}
	}
	return nil
}

// ParseManifests parses "---"-separated YAML manifests into objects.
func ParseManifests(src string) ([]ctrl.Object, error) {
	var out []ctrl.Object
	for i, doc := range SplitYAMLDocs(src) {
		var tm ctrl.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("manifest %d: %v", i+1, err)
		}
		obj := ctrl.NewObject(ctrl.Kind(tm.Kind))
		if obj == nil {
			return nil, fmt.Errorf("manifest %d: unknown kind %q", i+1, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("manifest %d (%s): %v", i+1, tm.Kind, err)
		}
		m := obj.GetObjectMeta()
		if m.Name == "" {
			return nil, fmt.Errorf("manifest %d (%s): metadata.name is required", i+1, tm.Kind)
		}
		if m.DeletionTimestamp != nil && len(m.Finalizers) == 0 {
			// The object starts out being deleted; only a finalizer can
			// keep it there.
			return nil, fmt.Errorf("manifest %d (%s %s): metadata.deletionTimestamp needs finalizers that hold the object", i+1, tm.Kind, m.Name)
		}
		if m.Namespace == "" {
			m.Namespace = "default"
		}
		out = append(out, obj)
	}
	return out, nil
}

func SplitYAMLDocs(src string) []string {
	var docs []string
	for _, d := range bytes.Split([]byte("\n"+src), []byte("\n---")) {
		if s := strings.TrimSpace(string(d)); s != "" {
			docs = append(docs, s)
		}
	}
	return docs
}
