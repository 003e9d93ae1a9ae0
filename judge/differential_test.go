package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"ctrljudge/judge/cluster"
	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family/deployment"
	"ctrljudge/judge/verdict"
)

// differentialSeeds are the seeds every fixture is judged at: a bug the
// oracle catches must be caught at each, a correct variant accepted at each.
var differentialSeeds = []uint64{1, 2, 3, 4, 5}

// TestDifferentialLearnerFiles judges each testdata/differential/*.txtar in
// submit mode at seeds 1 to 5: buggy controllers that only the comparison
// with the reference solution catches ("oracle: reference", with message
// substrings), and correct variants written another way ("outcome:
// accepted").
func TestDifferentialLearnerFiles(t *testing.T) {
	eng := engine(t)
	cat := catalog(t)
	files, _ := filepath.Glob("testdata/differential/*.txtar")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			var name string
			var code []byte
			for _, file := range ar.Files {
				if file.Name == "want" {
					want = strings.Split(strings.TrimSpace(string(file.Data)), "\n")
				} else {
					name, code = file.Name, file.Data
				}
			}
			var ex *exercise.Exercise
			for _, line := range want {
				if id, ok := strings.CutPrefix(line, "exercise: "); ok {
					if ex, err = cat.Find(id); err != nil {
						t.Fatal(err)
					}
				}
			}
			if ex == nil {
				t.Fatal("want names no exercise")
			}
			for _, seed := range differentialSeeds {
				v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, FileName: name, Seed: seed})
				first := v.FirstFailure()
				for _, line := range want {
					key, val, _ := strings.Cut(line, ": ")
					switch key {
					case "exercise":
					case "outcome":
						if string(v.Outcome) != val {
							t.Errorf("seed %d: outcome %s, want %s (%s %q: %s: %s)", seed, v.Outcome, val, v.Summary(), first.Name, first.Oracle, first.Message)
						}
					case "oracle":
						if first.Oracle != verdict.Oracle(val) {
							t.Errorf("seed %d: first failing oracle %q in %q, want %q (%s)", seed, first.Oracle, first.Name, val, first.Message)
						}
					case "message":
						if !strings.Contains(first.Message, val) {
							t.Errorf("seed %d: message %q lacks %q", seed, first.Message, val)
						}
					default:
						t.Fatalf("bad want line %q", line)
					}
				}
			}
		})
	}
}

// The reference may come from the solution's own judging, from a run made
// for this submission, or from memory: the verdict is the same JSON.
func TestReferenceFromAnySourceGivesTheSameVerdict(t *testing.T) {
	engine(t)
	ex := exercise171(t)
	ar, err := txtar.ParseFile("testdata/differential/171-scale-down-deletes-first.txtar")
	if err != nil {
		t.Fatal(err)
	}
	code := ar.Files[1].Data
	judge := func(eng *Engine) []byte {
		v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, Seed: 7})
		if v.Outcome != verdict.OutcomeWrongAnswer || v.FirstFailure().Oracle != verdict.OracleReference {
			t.Fatalf("%s: %s %s", v.Outcome, v.FirstFailure().Oracle, v.FirstFailure().Message)
		}
		v.Timings = verdict.Timings{}
		b, _ := json.Marshal(v)
		return b
	}
	var outs [][]byte
	for _, solutionFirst := range []bool{false, true} {
		eng, err := NewEngine(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if solutionFirst {
			if v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: ex.Solution, Seed: 7}); v.Outcome != verdict.OutcomeAccepted {
				t.Fatalf("solution: %s", v.Outcome)
			}
		}
		outs = append(outs, judge(eng))
		// Memoized now; a new verdict (another file name) uses the memo.
		code = append(code, '\n')
		outs = append(outs, judge(eng))
		code = code[:len(code)-1]
		eng.Close()
	}
	// From CacheDir: a second engine (a second CLI run) finds every
	// reference stored by the first and runs no solution at all; a
	// damaged file is run again and replaced.
	dir := t.TempDir()
	for round := 0; round < 3; round++ {
		eng, err := NewEngine(Options{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, judge(eng))
		eng.mu.Lock()
		built := len(eng.solutions)
		eng.mu.Unlock()
		eng.Close()
		stored, _ := filepath.Glob(filepath.Join(dir, referenceDir, "*.json"))
		switch {
		case round == 0 && (built != 1 || len(stored) == 0):
			t.Fatalf("first engine: %d solution builds, %d stored references", built, len(stored))
		case round == 1 && built != 0:
			t.Fatalf("second engine built the solution although every reference was stored")
		case round == 1:
			for _, f := range stored {
				os.WriteFile(f, []byte(`{"Key":"`), 0o600)
			}
		case round == 2 && built != 1:
			t.Fatalf("damaged references were not run again")
		}
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Fatalf("verdict %d differs:\n%s\n%s", i, outs[0], outs[i])
		}
	}
}

func pod(name, image string, labels map[string]string, owner *ctrl.Deployment) *ctrl.Pod {
	p := &ctrl.Pod{ObjectMeta: ctrl.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec:   ctrl.PodSpec{Containers: []ctrl.Container{{Name: "web", Image: image}}},
		Status: ctrl.PodStatus{Phase: ctrl.PodRunning}}
	if owner != nil {
		ctrl.SetControllerReference(owner, p)
	}
	return p
}

// flatten masks what differs between two correct runs and keeps what the
// statement decides.
func TestFlattenMasksVolatileFields(t *testing.T) {
	api := cluster.NewAPIServer(nil, func() time.Time { return time.Unix(100, 0) })
	d, _ := api.Create(&ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: "web", Namespace: "default"}}, false)
	a := pod("web-abcde", "web:v1", map[string]string{"app": "web"}, d.(*ctrl.Deployment))
	a.UID, a.ResourceVersion, a.Generation, a.CreationTimestamp = "uid-9", "42", 3, time.Unix(5, 0)
	a.Finalizers = []string{"b", "a"}
	b := pod("web-abcde", "web:v1", map[string]string{"app": "web"}, d.(*ctrl.Deployment))
	b.Finalizers = []string{"a", "b"}
	fa, fb := flatten(a, deployment.Family{}, api, nil), flatten(b, deployment.Family{}, api, nil)
	if !sameFields(&fa, &fb) {
		t.Fatalf("volatile fields compared:\n%v\n%v", fa.fields, fb.fields)
	}
	// The owner's uid is compared by whether it is the owner's.
	b.OwnerReferences[0].UID = "uid-77"
	fb = flatten(b, deployment.Family{}, api, nil)
	if x, y, _ := fieldDiff(&fa, &fb); x != "with an owner reference to Deployment web that carries the owner's uid" ||
		y != "with an owner reference to Deployment web that carries another object's uid" {
		t.Fatalf("uid: %q / %q", x, y)
	}
	// Declared free, a field is not compared.
	b.OwnerReferences[0].UID = a.OwnerReferences[0].UID
	b.OwnerReferences[0].BlockOwnerDeletion = false
	b.Annotations = map[string]string{"x": "y"}
	free, err := exercise.ParseReference(&exercise.Reference{Free: []string{"Pod metadata.annotations", "* metadata.ownerReferences.*.blockOwnerDeletion"}})
	if err != nil {
		t.Fatal(err)
	}
	fa, fb = flatten(a, deployment.Family{}, api, free), flatten(b, deployment.Family{}, api, free)
	if !sameFields(&fa, &fb) {
		t.Fatalf("free fields compared: %v", fb.fields)
	}
	fa, fb = flatten(a, deployment.Family{}, api, free[:1]), flatten(b, deployment.Family{}, api, free[:1])
	if x, y, _ := fieldDiff(&fa, &fb); x != "with blockOwnerDeletion true in its owner reference to Deployment web" ||
		y != "with blockOwnerDeletion false in its owner reference to Deployment web" {
		t.Fatalf("blockOwnerDeletion: %q / %q", x, y)
	}
	// What the statement decides is compared, and worded.
	b.OwnerReferences = nil
	fb = flatten(b, deployment.Family{}, api, free)
	if x, y, _ := fieldDiff(&fa, &fb); x != "with Deployment web as its controller" || y != "with no owner reference to Deployment web" {
		t.Fatalf("owner: %q / %q", x, y)
	}
	b.OwnerReferences = a.OwnerReferences
	b.Labels = nil
	fb = flatten(b, deployment.Family{}, api, free)
	if x, y, _ := fieldDiff(&fa, &fb); x != "with label app=web" || y != "with no label app" {
		t.Fatalf("labels: %q / %q", x, y)
	}
}

func TestParseReferenceRefusesBadDeclarations(t *testing.T) {
	for _, r := range []exercise.Reference{{Writes: "some"}, {Free: []string{"metadata.labels"}}, {Free: []string{"Service spec"}}} {
		if _, err := exercise.ParseReference(&r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

// At the end, objects whose names differ (generated, or picked by the
// seed) are the same object when their fields are; what is left is told
// as a difference.
func TestCompareEndMatchesByContent(t *testing.T) {
	api := cluster.NewAPIServer(nil, func() time.Time { return time.Unix(100, 0) })
	o, _ := api.Create(&ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: "web", Namespace: "default"}}, false)
	d := o.(*ctrl.Deployment)
	flat := func(ps ...*ctrl.Pod) []flatObject {
		var out []flatObject
		for _, p := range ps {
			out = append(out, flatten(p, deployment.Family{}, api, nil))
		}
		return out
	}
	app := map[string]string{"app": "web"}
	ref := flat(pod("web-0a", "web:v1", app, d), pod("web-xxxxx", "web:v2", app, d))
	if msg := compareEnd(ref, flat(pod("web-0b", "web:v1", app, d), pod("web-yyyyy", "web:v2", app, d))); msg != "" {
		t.Fatalf("same objects under other names: %s", msg)
	}
	msg := compareEnd(ref, flat(pod("web-0a", "web:v1", app, d), pod("web-yyyyy", "web:v2", nil, d)))
	if msg != "At the end, the reference solution leaves Pod web-xxxxx with label app=web; yours leaves Pod web-yyyyy with no label app (and no Pod like the reference's)." {
		t.Fatalf("message: %s", msg)
	}
	msg = compareEnd(ref, flat(pod("web-0a", "web:v1", app, d)))
	if !strings.Contains(msg, "leaves Pod web-xxxxx (web:v2, Running); yours leaves no such Pod") {
		t.Fatalf("message: %s", msg)
	}
	msg = compareEnd(ref[:1], flat(pod("web-0a", "web:v1", app, d), pod("web-yyyyy", "web:v2", app, d)))
	if !strings.Contains(msg, "yours leaves Pod web-yyyyy (web:v2, Running), which the reference solution does not") {
		t.Fatalf("message: %s", msg)
	}
}

// A server warms the reference memo at start (WarmReferences): the first
// learner's submission to an exercise then runs no reference solution.
func TestWarmReferencesServeTheFirstSubmission(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles to WebAssembly; skipped with -short")
	}
	eng, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ex := exercise171(t)
	memo := func() int {
		eng.mu.Lock()
		defer eng.mu.Unlock()
		return len(eng.refs.m)
	}
	eng.WarmReferences(context.Background(), []*exercise.Exercise{ex})
	warmed := memo()
	if want := len(ex.Suite.Tests) + ex.Suite.Generate.Scenarios; warmed != want {
		t.Fatalf("warming kept %d reference runs, want one per test (%d)", warmed, want)
	}
	code := append(append([]byte(nil), ex.Solution...), "\nvar learnersOwn = 1\n"...)
	v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code})
	if v.Outcome != verdict.OutcomeAccepted {
		t.Fatalf("the solution with a variable more: %s %s", v.Outcome, v.FirstFailure().Message)
	}
	if n := memo() - warmed; n != 0 {
		t.Errorf("the first submission after warming ran the reference on %d tests", n)
	}
}

// An observation stored on disk comes back whole: every field of it, set,
// survives the round trip (a field the store forgot would make the
// comparison differ between a cold and a warm cache).
func TestStoredObservationsKeepEveryField(t *testing.T) {
	e := &Engine{cacheDir: t.TempDir()}
	obj := flatObject{kind: ctrl.KindPod, ns: "shop", name: "web-0a", generated: true, words: "Pod web-0a",
		fields: []field{{[]string{"spec", "image"}, "web:v1"}}}
	o := &observation{passed: true, writes: []observedWrite{{"created", obj}}, cut: true, world: "digest", end: []flatObject{obj},
		results: []string{"shop/chat: ctrl.Result{RequeueAfter: 30s}"}}
	v := reflect.ValueOf(*o)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves observation.%s unset: set it", v.Type().Field(i).Name)
		}
	}
	e.saveReference("k", o)
	got, ok := e.loadReference("k")
	if !ok || !reflect.DeepEqual(got, o) {
		t.Fatalf("stored and loaded:\n%+v\nwant\n%+v", got, o)
	}
}
