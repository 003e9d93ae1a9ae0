package judge

import (
	"context"
	"slices"
	"strings"
	"testing"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// Seed-independent detection: a bug that only a fault reveals is caught
// at every seed, because each planned fault class fires in every test
// where it has an opportunity, and a crash after a write cuts a call
// between two writes wherever one can (faults.go, repin). Each case is a
// buggy controller compiled to WebAssembly, judged on the one test that
// plans the fault it needs, at seeds 1 to 5.
func TestFaultOnlyBugsAreCaughtAtEverySeed(t *testing.T) {
	eng := engine(t)
	cat := catalog(t)
	mutant := func(ex *exercise.Exercise, name string) []byte {
		for _, m := range ex.Mutants {
			if m.Name == name {
				return m.Code
			}
		}
		t.Fatalf("%s has no mutant %s", ex.Slug, name)
		return nil
	}
	cases := []struct {
		exercise, name, test string
		code                 func(ex *exercise.Exercise) []byte
		oracle               verdict.Oracle
	}{
		// A clean-up that takes a missing entry for "done": only a crash
		// between its two writes leaves a Deployment in that state.
		{"173", "no-entry-means-done", "crashes between the two writes of a clean-up", func(ex *exercise.Exercise) []byte {
			code := strings.Replace(string(ex.Solution), "\tif _, ok := reg.Data[entry]; ok {\n", "\tif _, ok := reg.Data[entry]; !ok {\n\t\treturn nil\n\t} else {\n", 1)
			if code == string(ex.Solution) {
				t.Fatal("173's solution no longer checks for the entry")
			}
			return []byte(code)
		}, verdict.OracleConvergence},
		// A new Deployment's entry written only in the call that added the
		// finalizer: a crash between the two writes loses it for good.
		{"173", "entry-only-with-the-finalizer", "two new Deployments with crashes after writes", func(ex *exercise.Exercise) []byte {
			code := strings.Replace(string(ex.Solution), "\tvar reg ctrl.ConfigMap\n\tif err := c.Get(ctx, registry, &reg); err != nil {\n\t\treturn ctrl.Result{}, err\n\t}\n\timage",
				"\tif !added {\n\t\treturn ctrl.Result{}, nil\n\t}\n\tvar reg ctrl.ConfigMap\n\tif err := c.Get(ctx, registry, &reg); err != nil {\n\t\treturn ctrl.Result{}, err\n\t}\n\timage", 1)
			code = strings.Replace(code, "\tif ctrl.AddFinalizer(&d, finalizer) {\n", "\tadded := ctrl.AddFinalizer(&d, finalizer)\n\tif added {\n", 1)
			if !strings.Contains(code, "if !added {") || !strings.Contains(code, "added := ") {
				t.Fatal("173's solution no longer adds its finalizer, then reads the registry")
			}
			return []byte(code)
		}, verdict.OracleConvergence},
		// A Conflict swallowed: only the conflict fault makes one.
		{"172", "swallows-conflict", "status updates that lose a race",
			func(ex *exercise.Exercise) []byte { return mutant(ex, "swallows-conflict") }, verdict.OracleSwallowedConflict},
		{"173", "swallows-conflicts", "conflicts on the finalizer and on the registry",
			func(ex *exercise.Exercise) []byte { return mutant(ex, "swallows-conflicts") }, ""},
		{"174", "swallows-conflict", "shared ConfigMap with conflicts",
			func(ex *exercise.Exercise) []byte { return mutant(ex, "swallows-conflict") }, verdict.OracleSwallowedConflict},
		// On a Conflict, the fresh resourceVersion copied onto the old
		// copy: the other writer's change is erased (a label or an
		// annotation: others' metadata; the replicas it set: safety).
		{"174", "copies-the-resource-version", "shared ConfigMap with conflicts", func(ex *exercise.Exercise) []byte {
			code := strings.Replace(string(ex.Solution), "\treturn ctrl.Result{}, c.Update(ctx, &d)\n", `	err = c.Update(ctx, &d)
	if ctrl.IsConflict(err) {
		var fresh ctrl.Deployment
		if err := c.Get(ctx, req.NamespacedName, &fresh); err != nil {
			return ctrl.Result{}, err
		}
		d.ResourceVersion = fresh.ResourceVersion
		err = c.Update(ctx, &d)
	}
	return ctrl.Result{}, err
`, 1)
			if code == string(ex.Solution) {
				t.Fatal("174's solution no longer ends with its Update")
			}
			return []byte(code)
		}, verdict.OracleForeignMetadata + "|" + verdict.OracleSafety},
	}
	for _, c := range cases {
		t.Run(c.exercise+"/"+c.name, func(t *testing.T) {
			ex, err := cat.Find(c.exercise)
			if err != nil {
				t.Fatal(err)
			}
			code := c.code(ex)
			for seed := uint64(1); seed <= 5; seed++ {
				v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, Seed: seed, Only: c.test, Mode: verdict.ModeSubmit})
				f := v.FirstFailure()
				if v.Outcome == verdict.OutcomeAccepted || f.Name != c.test || c.oracle != "" && !slices.Contains(strings.Split(string(c.oracle), "|"), string(f.Oracle)) {
					t.Errorf("seed %d: %s, %q %s: %s (faults %v)", seed, v.Outcome, f.Name, f.Oracle, f.Message, f.FaultClasses)
				}
			}
		})
	}
}

// The key of a controller's random bytes is the submission seed's, the
// same for every test of it, never the sandbox's fixed key 0, and another
// at another seed.
func TestRuntimeKeyIsTheSeeds(t *testing.T) {
	seen := map[uint64]uint64{}
	for seed := range uint64(1000) {
		k := RuntimeKey(seed)
		if k == 0 {
			t.Fatalf("seed %d gives the fixed key 0", seed)
		}
		if k != RuntimeKey(seed) {
			t.Fatalf("seed %d gives two keys", seed)
		}
		if other, ok := seen[k]; ok {
			t.Errorf("seeds %d and %d give the same key", other, seed)
		}
		seen[k] = seed
	}
}
