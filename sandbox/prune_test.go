package sandbox

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// A module compiled with only the library functions a workload called
// runs that workload as the whole module does; a call outside it stops
// with TrapPruned, and Whole runs it as before. With nothing kept, not
// even the runtime's start survives.
func TestPrunedModuleRunsAsTheWholeOne(t *testing.T) {
	// What starting and calling next needs of the runtime.
	rec, recMod := snapModuleWith(t, snapLearner, Config{Interpreter: true, RecordCalls: true})
	only := []snapStart{{what: "next only", calls: []string{"next", "next"}}}
	transcript(t, rec, recMod, only)
	keep := rec.CalledFunctions()
	if len(keep) < 50 || !strings.Contains(strings.Join(keep, " "), "runtime.mallocgc") {
		t.Fatalf("recorded %d library functions: %v", len(keep), keep)
	}

	whole, wholeMod := snapModuleWith(t, snapLearner, Config{Interpreter: true})
	pruned, prunedMod := snapModuleWith(t, snapLearner, Config{Interpreter: true, Keep: keep})
	if prunedMod.Pruned < 300 || wholeMod.Pruned != 0 {
		t.Fatalf("%d functions pruned (without Keep: %d)", prunedMod.Pruned, wholeMod.Pruned)
	}
	want, got := transcript(t, whole, wholeMod, only), transcript(t, pruned, prunedMod, only)
	if want[0] != got[0] {
		t.Errorf("the workload it was kept for:\nwhole:  %s\npruned: %s", want[0], got[0])
	}

	// report formats a map's keys and a time: runtime code next never ran.
	report := []snapStart{{what: "report", at: time.Second, calls: []string{"next", "report"}}}
	got = transcript(t, pruned, prunedMod, report)
	if !strings.Contains(got[0], "trap pruned") {
		t.Fatalf("a call outside the kept functions: %s", got[0])
	}
	full, err := pruned.Whole(context.Background(), prunedMod)
	if err != nil {
		t.Fatal(err)
	}
	want, got = transcript(t, whole, wholeMod, report), transcript(t, pruned, full, report)
	if want[0] != got[0] || strings.Contains(got[0], "trap") {
		t.Errorf("on the whole module:\nwant %s\ngot  %s", want[0], got[0])
	}
	if again, _ := pruned.Whole(context.Background(), prunedMod); again != full || pruned.WholeCompiles() != 1 {
		t.Errorf("the whole module was compiled %d times", pruned.WholeCompiles())
	}

	// Nothing kept: the runtime's start stops at its first call.
	bare, bareMod := snapModuleWith(t, snapLearner, Config{Interpreter: true, Keep: []string{}})
	_, err = bareMod.Instantiate(context.Background(), bare, &countingHost{}, Limits{})
	var trap *Trap
	if !errors.As(err, &trap) || trap.Kind != TrapPruned {
		t.Errorf("starting with no library function kept: %v", err)
	}
}

// tableLearner's report reaches a runtime function only through a func
// value: a call through the table, which Go also makes for an interface's
// methods and to resume a goroutine. (A package the Keep list does not
// name is kept whole; the runtime never is.)
const tableLearner = `package main

import "runtime"

var calls int

var goroutines = runtime.NumGoroutine

func next() int32 {
	calls++
	if calls < 0 {
		ask("never") // so that the module imports the host's call, as learners' do
	}
	return int32(calls)
}

func report() { calls += goroutines() }
`

// A pruned function's slot in the table is empty, and a call through it
// stops the instance as the stub would have: TrapPruned, and the whole
// module runs it. wazero's compiler reports an empty slot as its
// interpreter does.
func TestPrunedFunctionsLeaveTheTable(t *testing.T) {
	rec, recMod := snapModuleWith(t, tableLearner, Config{Interpreter: true, RecordCalls: true})
	only := []snapStart{{what: "next only", calls: []string{"next"}}}
	transcript(t, rec, recMod, only)
	keep := rec.CalledFunctions()
	if slices.Contains(keep, "runtime.NumGoroutine") {
		t.Fatalf("runtime.NumGoroutine recorded before report ran: %v", keep)
	}
	for _, interpreter := range []bool{true, false} {
		pruned, prunedMod := snapModuleWith(t, tableLearner, Config{Interpreter: interpreter, Keep: keep})
		if prunedMod.Pruned == 0 || !prunedMod.emptySlots {
			t.Fatal("the stubs were left in the table")
		}
		report := []snapStart{{what: "report", calls: []string{"next", "report", "next"}}}
		got := transcript(t, pruned, prunedMod, report)[0]
		if !strings.Contains(got, `trap pruned "a function compiled out of the module was called through the table"`) {
			t.Fatalf("interpreter %v: a call through a stub's slot: %s", interpreter, got)
		}
		full, err := pruned.Whole(context.Background(), prunedMod)
		if err != nil {
			t.Fatal(err)
		}
		if full.emptySlots {
			t.Error("the whole module has empty slots")
		}
		if got := transcript(t, pruned, full, report)[0]; !strings.Contains(got, "report [] ok") || strings.Contains(got, "trap") {
			t.Errorf("interpreter %v: on the whole module: %s", interpreter, got)
		}
	}
}

// A Keep list governs the runtime and the packages it names; a package
// it never names is one it was not made for, and is kept whole.
func TestKeepListKeepsPackagesItDoesNotName(t *testing.T) {
	k := newKeepList([]string{"strings.Index", "runtime.mallocgc", "ctrljudge*"})
	for _, c := range []struct {
		name string
		kept bool
	}{
		{"strings.Index", true},
		{"strings.Fields", false},
		{"runtime.mallocgc", true},
		{"runtime.gcStart", false},
		{"internal_runtime_atomic.Load", false},
		{"regexp.MustCompile", true},
		{"regexp_syntax.(*parser).op", true},
		{"ctrljudge_judge_ctrl.Log", true},
	} {
		if got := k.has(c.name); got != c.kept {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.kept)
		}
	}
}
