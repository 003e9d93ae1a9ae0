package judge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

// The differential oracle: every test the learner's code runs is run by
// the exercise's solution.go too, on the same scenario, seed and faults,
// and the two runs are compared with volatile fields masked: each write
// with the object it touched (where the statement fixes them, up to the
// first fault of either run: until then both met the same world), and the
// objects left at the end (where the rest of the world did the same to
// both runs). What a statement leaves free, the
// exercise declares in tests.yaml (Reference), so correct variants pass.
// See RATIONALE.md, "Why the reference solution as an oracle?".

// ---- objects with volatile fields masked

// field is one leaf of an object: its path and its value as text.
type field struct {
	path  []string
	value string
}

func (f field) key() string { return strings.Join(f.path, "\x00") }

// flatObject is an object as the comparison sees it: kind, namespace and
// name (a generated one is compared only while both runs are in step),
// and every other field that is neither volatile nor free, sorted.
type flatObject struct {
	kind      ctrl.Kind
	ns, name  string
	generated bool
	words     string // a few words for messages: "Pod web-0a (web:v1, Running, Ready)"
	fields    []field
}

func (o *flatObject) key() string { return string(o.kind) + "/" + o.ns + "/" + o.name }

// ref names the object in a message.
func (o *flatObject) ref() string { return string(o.kind) + " " + text.Shown(o.name) }

// maxComparedValue is how much of a value an observation keeps as text;
// a longer one keeps its start and a digest, so equality still holds.
const maxComparedValue = 120

// flatten masks o's volatile fields (uid, resourceVersion, timestamps,
// generation) and drops its free ones. Owner references are keyed by
// kind and name, with their uid replaced by whether it is that owner's;
// finalizers are a set; observedGeneration is told relative to the
// generation.
func flatten(o ctrl.Object, m family.Family, api *cluster.APIServer, free []exercise.FreeField) flatObject {
	meta := o.GetObjectMeta()
	fo := flatObject{kind: o.GetObjectKind(), ns: meta.Namespace, name: meta.Name,
		generated: meta.GenerateName != "" && strings.HasPrefix(meta.Name, meta.GenerateName),
		words:     text.Clip(describeObject(o, m), text.MaxDetail)}
	b, err := json.Marshal(o)
	if err != nil {
		return fo
	}
	var tree map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&tree) != nil {
		return fo
	}
	delete(tree, "kind")
	delete(tree, "apiVersion")
	md, _ := tree["metadata"].(map[string]any)
	delete(tree, "metadata")
	var fields []field
	add := func(value string, path ...string) {
		if len(value) > maxComparedValue {
			sum := sha256.Sum256([]byte(value))
			value = text.Clip(value, maxComparedValue) + " #" + hex.EncodeToString(sum[:8])
		}
		fields = append(fields, field{path, value})
	}
	// metadata: identity and volatile fields out, the rest by meaning.
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "generation",
		"deletionTimestamp", "finalizers", "ownerReferences"} {
		delete(md, k)
	}
	walk(md, []string{"metadata"}, add)
	if meta.DeletionTimestamp != nil {
		add("set", "metadata", "deletionTimestamp")
	}
	for _, f := range meta.Finalizers {
		add("", "metadata", "finalizers", f)
	}
	for _, r := range meta.OwnerReferences {
		at := []string{"metadata", "ownerReferences", r.Kind + " " + r.Name}
		uid := "another object's"
		if owner := api.Get(ctrl.Kind(r.Kind), meta.Namespace, r.Name); owner != nil && owner.GetObjectMeta().UID == r.UID {
			uid = "the owner's"
		}
		add(uid, append(at, "uid")...)
		add(r.APIVersion, append(at, "apiVersion")...)
		add(strconv.FormatBool(r.Controller), append(at, "controller")...)
		add(strconv.FormatBool(r.BlockOwnerDeletion), append(at, "blockOwnerDeletion")...)
	}
	if st, ok := tree["status"].(map[string]any); ok {
		if g, ok := st["observedGeneration"]; ok {
			delete(st, "observedGeneration")
			if n, ok := g.(json.Number); ok {
				if og, err := n.Int64(); err == nil {
					add(relativeGeneration(og-meta.Generation), "status", "observedGeneration")
				}
			}
		}
	}
	walk(tree, nil, add)
	kept := fields[:0]
	for _, f := range fields {
		isFree := false
		for _, fr := range free {
			isFree = isFree || fr.Covers(fo.kind, f.path)
		}
		if !isFree {
			kept = append(kept, f)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].key() < kept[j].key() })
	fo.fields = kept
	return fo
}

func relativeGeneration(d int64) string {
	switch {
	case d == 0:
		return "its generation"
	case d < 0:
		return strconv.FormatInt(-d, 10) + " behind its generation"
	}
	return strconv.FormatInt(d, 10) + " ahead of its generation"
}

// walk adds every leaf of a decoded JSON value; an empty map or list and
// null add nothing, as omitempty would have it.
func walk(v any, path []string, add func(string, ...string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x { // order does not matter: flatten sorts
			walk(e, append(path[:len(path):len(path)], k), add)
		}
	case []any:
		for i, e := range x {
			walk(e, append(path[:len(path):len(path)], strconv.Itoa(i)), add)
		}
	case nil:
	case string:
		add(x, path...)
	case json.Number:
		add(x.String(), path...)
	case bool:
		add(strconv.FormatBool(x), path...)
	}
}

// ---- what a run leaves for the comparison

// observedWrite is one write of the controller that changed the cluster,
// with the object as it was stored after it (as it was before, for a
// deletion).
type observedWrite struct {
	verb string // created, updated, deleted
	obj  flatObject
}

// observation is what the comparison keeps of a run: the reference's
// is memoized, the learner's compared as it goes, so a learner that
// writes a lot keeps nothing but a count.
type observation struct {
	passed bool // the run passed every other oracle
	writes []observedWrite
	cut    bool   // a fault fired: writes holds those made before it
	world  string // digest of what others did to the cluster
	end    []flatObject
	// results are what each call returned, in order, before the first
	// fault ("chat: RequeueAfter 30s"), where the exercise compares them.
	results []string
}

// differential follows one test run: the reference's, to be kept; or the
// learner's, to be compared with ref.
type differential struct {
	s        *sim
	free     []exercise.FreeField
	each     bool         // compare write by write
	results  bool         // compare each call's result too
	calls    int          // calls that returned so far
	cut      bool         // a fault fired in this run: its later writes are its own
	ref      *observation // nil while recording the reference
	sink     func(*observation)
	obs      observation
	world    hashChain
	made     map[string]bool // uids of the objects the controller created
	ready    map[string]bool // each Pod's readiness, as the kubelet left it
	n        int             // controller writes so far
	mismatch string          // the first write that differs, in words
}

// hashChain digests a sequence of strings.
type hashChain [sha256.Size]byte

func (h *hashChain) Add(s string) {
	x := sha256.New()
	x.Write(h[:])
	x.Write([]byte(s))
	x.Sum(h[:0])
}

type diffKey struct{}

// diffContext is what a run's context carries for this oracle: the
// referee that runs and remembers the reference, or, in the reference's
// own run, where to put what it saw.
type diffContext struct {
	ref  *referee
	sink func(*observation)
}

func withDifferential(ctx context.Context, d diffContext) context.Context {
	return context.WithValue(ctx, diffKey{}, d)
}

// startDifferential is playOnce's hook before a test plays (run.go): it fetches the
// reference's observation (running the solution first if need be, before
// the learner's instance exists) and starts watching. It returns nil when
// the run has no reference to meet.
func (s *sim) startDifferential(ctx context.Context, ex *exercise.Exercise, t *exercise.Test, seed uint64) *differential {
	dc, _ := ctx.Value(diffKey{}).(diffContext)
	if dc.ref == nil && dc.sink == nil {
		return nil
	}
	free, _ := exercise.ParseReference(&ex.Suite.Reference) // validated by ParseSuite
	d := &differential{s: s, free: free, sink: dc.sink, made: map[string]bool{}, ready: map[string]bool{},
		each: ex.Suite.Reference.Writes != "end", results: ex.Suite.Reference.Results == "each"}
	switch {
	case dc.sink != nil:
	case dc.ref.self:
		// This is the reference solution itself: what it does here
		// becomes the reference, with no second run.
		d.sink = dc.ref.keep(t, seed)
	default:
		ref, err := dc.ref.Observe(ctx, t, seed)
		switch {
		case errors.Is(err, errNotJudged):
			s.notJudged()
			return nil
		case err != nil:
			s.failf(verdict.OracleSetup, "The judge could not run the exercise's reference solution: "+err.Error())
			return nil
		case !ref.passed:
			return nil // the reference fails this scenario: it has no say
		}
		d.ref = ref
	}
	inner := s.api.Watch
	s.api.Watch = func(ev cluster.WatchEvent) {
		d.seen(ev)
		inner(ev)
	}
	s.diff = d
	return d
}

// faultFired is noteFault's hook: until the first fault of either run,
// the two runs met the same world, so their writes must agree; from it on,
// each run's writes answer its own faults, and are not compared.
func (d *differential) faultFired() {
	if d != nil && !d.cut {
		d.cut = true
		d.obs.cut = true
	}
}

// seen takes every change to the cluster: the controller's writes, and
// what others did (the world the controller answered).
func (d *differential) seen(ev cluster.WatchEvent) {
	s := d.s
	switch {
	case s.actor == "controller":
		if ev.Type == cluster.EvAdded {
			d.made[ev.Object.GetObjectMeta().UID] = true
		}
		d.n++
		if !d.each || d.cut {
			return
		}
		verb := map[cluster.EventType]string{cluster.EvAdded: "created", cluster.EvModified: "updated", cluster.EvDeleted: "deleted"}[ev.Type]
		w := observedWrite{verb, flatten(ev.Object, s.model, s.api, d.free)}
		if d.ref == nil {
			d.obs.writes = append(d.obs.writes, w)
		} else if d.mismatch == "" {
			d.mismatch = compareWrite(d.ref, d.n, &w)
		}
	case s.actor == "gc", s.actor == "kubelet" && d.routine(ev):
		// Consequences of the controller's writes, not the world's doing.
	default:
		line := s.actor + " " + string(ev.Type) + " " + cluster.KeyOf(ev.Object)
		if p, ok := ev.Object.(*ctrl.Pod); ok && s.actor == "kubelet" {
			line += " " + string(p.Status.Phase) + " ready=" + strconv.FormatBool(ctrl.IsPodReady(p))
		} else if s.actor != "user" {
			// Someone else's change: what it changed matters too.
			fo := flatten(ev.Object, s.model, s.api, d.free)
			for _, f := range fo.fields {
				line += "\x00" + f.key() + "=" + f.value
			}
		}
		d.world.Add(line)
	}
}

// returned takes what a call of the controller returned, where the
// exercise compares results: the reference's are kept, the learner's
// compared with them one by one, up to the first fault of either run.
func (d *differential) returned(key string, r *ctrl.Call) {
	if d == nil || !d.results || d.cut {
		return
	}
	d.calls++
	got := key + ": " + resultWords(r)
	switch {
	case d.ref == nil:
		d.obs.results = append(d.obs.results, got)
	case d.mismatch != "":
	case d.calls > len(d.ref.results):
		if !d.ref.cut {
			d.mismatch = "Your reconcile #" + strconv.Itoa(d.s.host.n) + " (of " + key + ") returned " + resultWords(r) +
				"; the reference solution returned from only " + text.Plural(len(d.ref.results), "call") + " in this test."
		}
	case d.ref.results[d.calls-1] != got:
		want := d.ref.results[d.calls-1]
		_, w, _ := strings.Cut(want, ": ")
		if rk, _, _ := strings.Cut(want, ": "); rk != key {
			w += " (to " + rk + ")"
		}
		d.mismatch = "Your reconcile #" + strconv.Itoa(d.s.host.n) + " (of " + key + ") returned " + resultWords(r) +
			"; the reference solution's returned " + w + ". The statement says exactly when a call returns an error, " +
			"and when it asks to be called again and after how long."
	}
}

// resultWords says what a call returned, for the comparison and its
// message: the error's text is the learner's to word, so only that
// there was one counts.
func resultWords(r *ctrl.Call) string {
	switch {
	case r.HasError:
		return "an error"
	case r.RequeueAfter > 0:
		return "ctrl.Result{RequeueAfter: " + r.RequeueAfter.String() + "}"
	}
	return "an empty ctrl.Result and no error"
}

// routine tells the kubelet's stages of a Pod the controller created
// (Pending, Running, Ready, at times that follow from the controller's
// writes) from what happens to the world: any change to a Pod the test
// made, and a Pod of the controller's that fails or stops being Ready.
func (d *differential) routine(ev cluster.WatchEvent) bool {
	p, ok := ev.Object.(*ctrl.Pod)
	if !ok {
		return false
	}
	was := d.ready[p.UID]
	d.ready[p.UID] = ctrl.IsPodReady(p)
	return d.made[p.UID] && ev.Type == cluster.EvModified && p.Status.Phase != ctrl.PodFailed && !(was && !ctrl.IsPodReady(p))
}

// finish is playOnce's hook after a test played: it keeps the reference's
// observation, or compares the learner's with it once every other oracle
// has passed.
func (d *differential) finish() {
	if d == nil {
		return
	}
	s := d.s
	d.obs.passed = s.fail == nil
	if s.fail != nil && d.ref != nil {
		return
	}
	if s.fail == nil {
		if s.ctl != nil {
			s.ctl.close() // the run is over; its instance is not needed
			s.ctl = nil
		}
		for _, k := range endKinds(s.suite.Controller.For) {
			for _, o := range s.api.List(k) {
				d.obs.end = append(d.obs.end, flatten(o, s.model, s.api, d.free))
			}
		}
	}
	d.obs.world = hex.EncodeToString(d.world[:])
	if d.ref == nil {
		if s.fail == nil || s.fail.oracle != verdict.OracleNotJudged {
			d.sink(&d.obs)
		}
		return
	}
	msg := d.mismatch
	if msg == "" && d.each && !d.cut && d.n < len(d.ref.writes) {
		w := d.ref.writes[d.n]
		msg = "The reference solution made " + text.Plural(len(d.ref.writes), "write") + " in this test; yours stopped after " +
			strconv.Itoa(d.n) + ". Its " + text.Ordinal(d.n+1) + " " + w.verb + " " + w.obj.words + "."
	}
	if msg == "" && d.ref.world == d.obs.world {
		msg = compareEnd(d.ref.end, d.obs.end)
	}
	if msg != "" {
		s.failf(verdict.OracleReference, msg)
	}
}

// ---- comparing

// compareWrite compares the learner's nth write with the reference's.
func compareWrite(ref *observation, n int, w *observedWrite) string {
	if n > len(ref.writes) && ref.cut {
		return "" // the reference's next write answered a fault of its own
	}
	return compareWrites(ref.writes, n, w)
}

func compareWrites(ref []observedWrite, n int, w *observedWrite) string {
	if n > len(ref) {
		return "Your " + text.Ordinal(n) + " write " + w.verb + " " + w.obj.words + "; the reference solution made only " +
			text.Plural(len(ref), "write") + " in this test."
	}
	r := &ref[n-1]
	head := "Your " + text.Ordinal(n) + " write differs from the reference solution's: "
	if r.verb != w.verb || r.obj.key() != w.obj.key() {
		return head + "the reference " + r.verb + " " + r.obj.words + "; yours " + w.verb + " " + w.obj.words + "."
	}
	if a, b, more := fieldDiff(&r.obj, &w.obj); a != "" {
		return head + "the reference " + r.verb + " " + r.obj.ref() + " " + a + "; yours " + w.verb + " it " + b + more + "."
	}
	return ""
}

// compareEnd compares the objects the two runs left: by name first, then
// objects whose names differ (generated, or picked at random) by content.
func compareEnd(ref, got []flatObject) string {
	byKey := map[string]*flatObject{}
	for i := range got {
		byKey[got[i].key()] = &got[i]
	}
	matched := map[*flatObject]bool{}
	var refLeft []*flatObject
	for i := range ref {
		r := &ref[i]
		g := byKey[r.key()]
		if g == nil {
			refLeft = append(refLeft, r)
			continue
		}
		matched[g] = true
		if a, b, more := fieldDiff(r, g); a != "" {
			return "At the end, the reference solution leaves " + r.ref() + " " + a + "; yours leaves it " + b + more + "."
		}
	}
	var gotLeft []*flatObject
	for i := range got {
		if !matched[&got[i]] {
			gotLeft = append(gotLeft, &got[i])
		}
	}
	// Names aside, an object of the same kind and namespace with the same
	// fields is the same object.
	var rl []*flatObject
	for _, r := range refLeft {
		j := -1
		for k, g := range gotLeft {
			if g.kind == r.kind && g.ns == r.ns && sameFields(r, g) {
				j = k
				break
			}
		}
		if j < 0 {
			rl = append(rl, r)
			continue
		}
		gotLeft = append(gotLeft[:j], gotLeft[j+1:]...)
	}
	for _, r := range rl {
		for _, g := range gotLeft {
			if g.kind == r.kind && g.ns == r.ns {
				a, b, more := fieldDiff(r, g)
				return "At the end, the reference solution leaves " + r.ref() + " " + a + "; yours leaves " + g.ref() + " " + b + more +
					" (and no " + string(r.kind) + " like the reference's)."
			}
		}
		return "At the end, the reference solution leaves " + r.words + "; yours leaves no such " + string(r.kind) + "."
	}
	for _, g := range gotLeft {
		return "At the end, yours leaves " + g.words + ", which the reference solution does not."
	}
	return ""
}

func sameFields(a, b *flatObject) bool {
	if len(a.fields) != len(b.fields) {
		return false
	}
	for i := range a.fields {
		if a.fields[i].key() != b.fields[i].key() || a.fields[i].value != b.fields[i].value {
			return false
		}
	}
	return true
}

// fieldDiff words the first difference between two objects' fields, as
// the reference has it and as the learner's has it, and how many more
// there are; "" when the fields are the same.
func fieldDiff(ref, got *flatObject) (a, b, more string) {
	rf, gf := ref.fields, got.fields
	var diffs [][2]string
	i, j := 0, 0
	for i < len(rf) || j < len(gf) {
		switch {
		case j == len(gf) || i < len(rf) && rf[i].key() < gf[j].key():
			have, hasNot := presence(rf[i], rf, gf)
			diffs = append(diffs, [2]string{have, hasNot})
			i++
		case i == len(rf) || gf[j].key() < rf[i].key():
			have, hasNot := presence(gf[j], gf, rf)
			diffs = append(diffs, [2]string{hasNot, have})
			j++
		default:
			if rf[i].value != gf[j].value {
				diffs = append(diffs, [2]string{phrase(rf[i], true), phrase(gf[j], true)})
			}
			i++
			j++
		}
	}
	if len(diffs) == 0 {
		return "", "", ""
	}
	// A missing owner reference or map shows as several missing fields;
	// one sentence says it.
	if n := len(diffs) - 1; n > 0 {
		more = " (and " + text.Plural(n, "other difference") + ")"
	}
	return diffs[0][0], diffs[0][1], more
}

// presence words a field that one object has (among its fields mine)
// and the other lacks (among theirs): a whole owner reference when none
// of its fields is there.
func presence(f field, mine, theirs []field) (have, hasNot string) {
	p := f.path
	if len(p) != 4 || p[0] != "metadata" || p[1] != "ownerReferences" {
		return phrase(f, true), phrase(f, false)
	}
	owner := text.Shown(p[2])
	for _, o := range theirs {
		if len(o.path) == 4 && o.path[1] == p[1] && o.path[2] == p[2] {
			return phrase(f, true), "with no " + p[3] + " in its owner reference to " + owner
		}
	}
	have = "with an owner reference to " + owner
	for _, o := range mine {
		if len(o.path) == 4 && o.path[1] == p[1] && o.path[2] == p[2] && o.path[3] == "controller" && o.value == "true" {
			have = "with " + owner + " as its controller"
		}
	}
	return have, "with no owner reference to " + owner
}

// phrase words one field as present (with its value) or absent.
func phrase(f field, present bool) string {
	p, v := f.path, shownValue(f.value)
	last := p[len(p)-1]
	if len(p) == 3 && p[0] == "metadata" {
		switch p[1] {
		case "labels":
			return pick(present, "with label "+last+"="+v, "with no label "+last)
		case "annotations":
			return pick(present, "with annotation "+last+"="+v, "with no annotation "+last)
		case "finalizers":
			return pick(present, "with finalizer "+last, "without finalizer "+last)
		}
	}
	if len(p) == 4 && p[0] == "metadata" && p[1] == "ownerReferences" {
		owner := text.Shown(p[2])
		switch {
		case !present:
			return "with no " + last + " in its owner reference to " + owner
		case last == "controller" && v == "true":
			return "with " + owner + " as its controller (ownerReferences controller: true)"
		case last == "controller":
			return "with an owner reference to " + owner + " that does not make it the controller (controller: false)"
		case last == "uid":
			return "with an owner reference to " + owner + " that carries " + v + " uid"
		}
		return "with " + last + " " + v + " in its owner reference to " + owner
	}
	if len(p) == 2 && p[0] == "data" {
		return pick(present, "with entry "+last+"="+v, "with no entry "+last)
	}
	switch strings.Join(p, ".") {
	case "metadata.deletionTimestamp":
		return pick(present, "being deleted (deletionTimestamp set)", "not being deleted")
	case "status.observedGeneration":
		return pick(present, "with status.observedGeneration at "+v, "with no status.observedGeneration")
	}
	var b strings.Builder
	for i, seg := range p {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(text.Shown(seg))
	}
	return pick(present, "with "+b.String()+" "+v, "with no "+b.String())
}

func shownValue(v string) string {
	if v == "" {
		return `""`
	}
	return text.Clip(v, maxComparedValue+20)
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// ---- the reference's runs, memoized

// maxCachedReferences bounds the memoized reference observations: a
// few KiB each, one per (exercise, test, seed, faults) judged lately.
const maxCachedReferences = 1024

// errNotJudged says a reference run was stopped by the clock or the
// caller, so it says nothing; the learner's test is not judged either.
var errNotJudged = errors.New("not judged")

// referee runs an exercise's reference solution for the tests of one
// submission. self says the submission is the solution itself, whose own
// runs then become the reference.
type referee struct {
	e    *Engine
	ex   *exercise.Exercise
	self bool
}

type refCall struct {
	done chan struct{}
	obs  *observation
	err  error
}

// referenceKey identifies a reference run: a solution run depends only
// on the solution, the suite's setup, the test (its scenario and faults)
// and the seed.
func (r *referee) key(t *exercise.Test, seed uint64) string {
	su := r.ex.Suite
	setup, err1 := json.Marshal([]any{su.Controller, su.Model, su.World, su.Rules, su.Reference})
	scenario, err2 := json.Marshal(t)
	if err1 != nil || err2 != nil {
		return "" // not a key: run the reference every time
	}
	var objs []byte
	for _, o := range t.Parsed {
		objs = ctrl.AppendObject(objs, o)
	}
	for i := range t.Steps {
		for _, o := range t.Steps[i].Parsed {
			objs = ctrl.AppendObject(objs, o)
		}
	}
	return hashOf(EngineVersion, string(r.ex.Solution), string(setup), string(scenario), string(objs), strconv.FormatUint(seed, 10))
}

// keep is the sink of the solution's own runs: each becomes the
// reference for its test (the last run of a test, if a fault was pinned).
func (r *referee) keep(t *exercise.Test, seed uint64) func(*observation) {
	key := r.key(t, seed)
	return func(o *observation) {
		if key == "" {
			return
		}
		r.e.mu.Lock()
		r.e.refs.put(key, o)
		r.e.mu.Unlock()
		r.e.saveReference(key, o)
	}
}

// Observe returns the reference's observation of test t at seed: from
// memory, from a concurrent run of the same, from CacheDir, or by running
// the solution.
func (r *referee) Observe(ctx context.Context, t *exercise.Test, seed uint64) (*observation, error) {
	e, key := r.e, r.key(t, seed)
	if key == "" {
		return r.run(ctx, t, seed)
	}
	for {
		e.mu.Lock()
		if o, ok := e.refs.Get(key); ok {
			e.mu.Unlock()
			return o, nil
		}
		if c, ok := e.refCalls[key]; ok {
			e.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return nil, errNotJudged
			}
			if errors.Is(c.err, errNotJudged) {
				continue // the other caller was stopped, not the run: try again
			}
			return c.obs, c.err
		}
		c := &refCall{done: make(chan struct{})}
		e.refCalls[key] = c
		e.mu.Unlock()
		var stored bool
		if c.obs, stored = e.loadReference(key); !stored {
			if c.obs, c.err = r.run(ctx, t, seed); c.err == nil {
				e.saveReference(key, c.obs)
			}
		}
		e.mu.Lock()
		delete(e.refCalls, key)
		if c.err == nil {
			e.refs.put(key, c.obs)
		}
		e.mu.Unlock()
		close(c.done)
		return c.obs, c.err
	}
}

// run runs the solution on test t, as runTest runs any code, keeping
// what the comparison needs.
func (r *referee) run(ctx context.Context, t *exercise.Test, seed uint64) (*observation, error) {
	wasm, err := r.e.solutionWasm(ctx, r.ex)
	if err != nil {
		return nil, err
	}
	mod, _, err := r.e.rt.Compile(ctx, wasm)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errNotJudged
		}
		return nil, fmt.Errorf("compiling solution.go: %w", err)
	}
	defer r.e.rt.Release(mod)
	var obs *observation
	sink := func(o *observation) { obs = o }
	res := runTest(withDifferential(ctx, diffContext{sink: sink}), startWasm(r.e.rt, mod), r.ex, t, seed, r.ex.FileName())
	if res.Oracle == verdict.OracleNotJudged || ctx.Err() != nil {
		return nil, errNotJudged
	}
	if obs == nil {
		return nil, errors.New("the solution's run left nothing to compare")
	}
	return obs, nil
}

// solutionWasm builds an exercise's solution once per engine and keeps
// it, out of the reach of the learners' builds that share the build cache.
func (e *Engine) solutionWasm(ctx context.Context, ex *exercise.Exercise) ([]byte, error) {
	key := hashOf(string(ex.Solution))
	e.mu.Lock()
	w := e.solutions[key]
	e.mu.Unlock()
	if w != nil {
		return w, nil
	}
	w, _, err := e.build(ctx, ex.Solution, ex.FileName())
	if err != nil {
		var busy *sandbox.BusyError
		if errors.As(err, &busy) || ctx.Err() != nil {
			return nil, errNotJudged
		}
		return nil, fmt.Errorf("building solution.go: %w", err)
	}
	e.mu.Lock()
	e.solutions[key] = w
	e.mu.Unlock()
	return w, nil
}

// WarmReferences fills the reference memo for submissions at DefaultSeed,
// the seed a server judges with, by judging each exercise's solution in
// submit mode (its own runs become the references): the first submission
// to an exercise after a start then runs no reference, which would
// otherwise double its cost. Exercises are taken in order while their
// tests fit in half the memo, so warming never evicts what it warmed.
// A server calls it once, after Warm, in the background.
func (e *Engine) WarmReferences(ctx context.Context, exs []*exercise.Exercise) {
	room := maxCachedReferences / 2
	for _, ex := range exs {
		n := len(ex.Suite.Tests)
		if ex.Suite.Generate != nil {
			n += ex.Suite.Generate.Scenarios
		}
		if room -= n; room < 0 || ctx.Err() != nil {
			return
		}
		e.Judge(ctx, Submission{Exercise: ex, Code: ex.Solution, Mode: verdict.ModeSubmit, Seed: DefaultSeed})
	}
}

// endKinds is the order in which the end of a run lists the objects: the
// controller's own kind first, then every other kind by name.
func endKinds(own ctrl.Kind) []ctrl.Kind {
	kinds := slices.DeleteFunc(ctrl.Kinds(), func(k ctrl.Kind) bool { return k == own })
	slices.Sort(kinds)
	return append([]ctrl.Kind{own}, kinds...)
}
