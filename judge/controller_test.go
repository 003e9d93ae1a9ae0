package judge

import (
	"context"
	"errors"
	"strings"
	"testing"

	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"ctrljudge/sandbox"
)

func TestTrapsBecomeTheirOracles(t *testing.T) {
	cases := []struct {
		err              error
		oracle, contains string
	}{
		{&sandbox.Trap{Kind: sandbox.TrapPanic, Message: "boom", Stack: []string{"main.Reconcile(...)", "    workspace/" + learnerPath + ":7", "runtime.gopanic()"}},
			"runtime", "Your controller panicked: boom"},
		{&sandbox.Trap{Kind: sandbox.TrapFuel, Steps: 5_000_000}, "timeout", "Reconcile #1 did more than 5,000,000 steps"},
		{&sandbox.Trap{Kind: sandbox.TrapFuel, Steps: 50_000_000, Total: true}, "timeout", "more than 50,000,000 steps of work in this test, in 1 reconcile"},
		{&sandbox.Trap{Kind: sandbox.TrapTimeout}, "not_judged", "machine was too busy"},
		{&sandbox.Trap{Kind: sandbox.TrapOutput, Message: "64 KiB"}, "output", "wrote too much output: 64 KiB"},
		{&sandbox.Trap{Kind: sandbox.TrapOutOfMemory, Message: "64 MiB"}, "memory", "ran out of memory: 64 MiB"},
		{&sandbox.Trap{Kind: sandbox.TrapExit, Message: "exit 1"}, "runtime", "stopped the program: exit 1"},
		{errors.New("no such export"), "runtime", "could not run your controller: no such export"},
	}
	for _, c := range cases {
		s, h := newTestHost(t)
		h.begin("default/web")
		s.trapped(c.err)
		if s.fail == nil || s.fail.oracle != verdict.Oracle(c.oracle) || !strings.Contains(s.fail.message, c.contains) {
			t.Errorf("%v: failure %+v; want %s with %q", c.err, s.fail, c.oracle, c.contains)
		}
	}
	// A module stopped because an oracle had already failed adds nothing.
	s, _ := newTestHost(t)
	s.trapped(&sandbox.Trap{Kind: sandbox.TrapHost, Err: errStop})
	if s.fail != nil {
		t.Fatalf("a stop after a failure became %+v", s.fail)
	}
	// A canceled test is not judged, whatever the error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.ctx = ctx
	s.trapped(errors.New("context canceled"))
	if s.fail == nil || s.fail.oracle != verdict.OracleNotJudged {
		t.Fatalf("a canceled test: %+v", s.fail)
	}
}

func TestLearnerFramesNameTheLearnersFile(t *testing.T) {
	stack := []string{"runtime.gopanic()", "main.Reconcile()", "workspace/" + learnerPath + ":12", "main.main(workspace/" + glueFile + ":3)", "main.helper(workspace/" + learnerPath + ":30)"}
	got := learnerFrames(stack, "mine.go")
	if len(got) != 2 || got[0] != "    at main.Reconcile()" || got[1] != "    at main.helper(mine.go:30)" {
		t.Fatalf("frames %q", got)
	}
	if text.Thousands(5_000_000) != "5,000,000" || text.Thousands(999) != "999" || text.Thousands(1000) != "1,000" {
		t.Fatal("thousands")
	}
}
