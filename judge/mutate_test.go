package judge

import (
	"context"
	"ctrljudge/judge/exercise"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const mutateSrc = `package main

import (
	"context"

	"ctrljudge/judge/ctrl"
)

func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	n := count(3)
	if n < 2 && n != 0 {
		ctrl.Log("few")
	}
	return ctrl.Result{}, nil
}

func count(k int) int {
	x := 0
	x++
	return x + k
}
`

// changed is the mutant's one changed region, as "-old|+new" lines.
func changed(m GeneratedMutant) string {
	var out []string
	for _, l := range strings.Split(m.Diff, "\n")[3:] {
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			out = append(out, strings.TrimSpace(l[:1]+strings.TrimSpace(l[1:])))
		}
	}
	return strings.Join(out, "|")
}

func TestGenerateMutants(t *testing.T) {
	g, err := GenerateMutants([]byte(mutateSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got, bad []string
	for _, m := range g.Mutants {
		got = append(got, fmt.Sprintf("%s #%d: %s", m.Key.Op, m.Key.N, changed(m)))
	}
	for _, m := range g.NoCompile {
		bad = append(bad, fmt.Sprintf("%s #%d: %s", m.Key.Op, m.Key.N, changed(m)))
	}
	want := []string{
		`return-early #1: +return ctrl.Result{}, nil`,
		`constant+1 #1: -n := count(3)|+n := count(4)`,
		`constant-1 #1: -n := count(3)|+n := count(2)`,
		`negate-if #1: -if n < 2 && n != 0 {|+if !(n < 2 && n != 0) {`,
		`drop-condition #1: -if n < 2 && n != 0 {|+if n < 2 {`,
		`drop-condition #2: -if n < 2 && n != 0 {|+if n != 0 {`,
		`flip-comparison #1: -if n < 2 && n != 0 {|+if n <= 2 && n != 0 {`,
		`constant+1 #1: -if n < 2 && n != 0 {|+if n < 3 && n != 0 {`,
		`constant-1 #1: -if n < 2 && n != 0 {|+if n < 1 && n != 0 {`,
		`flip-comparison #2: -if n < 2 && n != 0 {|+if n < 2 && n == 0 {`,
		`constant+1 #2: -if n < 2 && n != 0 {|+if n < 2 && n != 1 {`,
		`constant-1 #2: -if n < 2 && n != 0 {|+if n < 2 && n != -1 {`,
		`drop-statement #1: -ctrl.Log("few")`,
		`return-early #1: +return ctrl.Result{}, nil`,
		`return-early #1: +return 0`,
		`constant+1 #1: -x := 0|+x := 1`,
		`constant-1 #1: -x := 0|+x := -1`,
		`drop-statement #1: -x++`,
	}
	// Dropping n := or x := leaves a variable undefined, and dropping the
	// if leaves n unused: the type checker rejects them, as the build would.
	wantBad := []string{
		`drop-statement #1: -n := count(3)`,
		`drop-statement #1: -if n < 2 && n != 0 {|-ctrl.Log("few")|-}`,
		`drop-statement #1: -x := 0`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(bad, wantBad) {
		t.Errorf("not compiling:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(wantBad, "\n"))
	}
	// The same source gives the same mutants, byte for byte.
	again, _ := GenerateMutants([]byte(mutateSrc))
	for i := range g.Mutants {
		if string(again.Mutants[i].Code) != string(g.Mutants[i].Code) || again.Mutants[i].Key != g.Mutants[i].Key {
			t.Fatalf("mutant %d differs on a second run", i)
		}
	}
	// Each diff applies to the source and gives the mutant.
	for _, m := range g.Mutants {
		out, err := exercise.ApplyPatch([]byte(m.Diff), []byte(mutateSrc))
		if err != nil || string(out) != string(m.Code) {
			t.Errorf("%s: diff does not reproduce the mutant: %v\n%s", m.Key, err, m.Diff)
		}
	}
}

func TestParseEquivalents(t *testing.T) {
	es, err := exercise.ParseEquivalents("e.yaml", []byte(`- {op: negate-if, line: "if x {", index: 2, reason: both branches do the same}`))
	if err != nil || len(es) != 1 || es[0].MutantKey != (exercise.MutantKey{Op: OpNegateIf, Line: "if x {", N: 2}) {
		t.Fatalf("%v %+v", err, es)
	}
	if _, err := exercise.ParseEquivalents("e.yaml", []byte(`- {op: negate-if, line: "if x {", index: 1}`)); err == nil {
		t.Fatal("an entry without a reason was accepted")
	}
}

// TestMutate171 judges a few of 171's mutants end to end: the first
// compiling ones (return early at the top of Reconcile must be killed),
// one listed as equivalent, and a stale entry.
func TestMutate171(t *testing.T) {
	eng := engine(t)
	ex := exercise171(t)
	g, err := GenerateMutants(ex.Solution)
	if err != nil {
		t.Fatal(err)
	}
	eq := g.Mutants[1].Key
	stale := exercise.MutantKey{Op: OpNegateIf, Line: "no such line", N: 1}
	r, err := eng.Mutate(context.Background(), ex, MutateOptions{Limit: 3, Equivalents: []exercise.Equivalent{
		{MutantKey: eq, Reason: "for the test"}, {MutantKey: stale, Reason: "gone"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 3 || r.Killed+r.Survived+r.Equivalent+r.NotJudged != 3 || r.Equivalent != 1 || r.NotJudged != 0 {
		t.Fatalf("report %+v", r)
	}
	first := r.Results[0]
	if first.Key.Op != OpReturnEarly || first.Status != MutantKilled || first.KilledBy == "" || first.Oracle == "" {
		t.Errorf("first mutant: %+v", first)
	}
	if r.Results[1].Status != MutantEquivalent || r.Results[1].Reason != "for the test" {
		t.Errorf("listed mutant: %+v", r.Results[1])
	}
	if len(r.Stale) != 1 || r.Stale[0].MutantKey != stale {
		t.Errorf("stale: %+v", r.Stale)
	}
	if r.Generated != len(g.Mutants)+len(g.NoCompile)+g.Identical || r.NoCompile != len(g.NoCompile) {
		t.Errorf("counts %+v", r)
	}
}
