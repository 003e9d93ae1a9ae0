package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/verdict"
)

// cmdDoctor checks what judging needs, each line saying what it enables.
func cmdDoctor(args []string) int {
	fs, dir := newFlags("doctor")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	ok := true
	row := func(good bool, what, enables, detail string) {
		mark := green("✓")
		if !good {
			mark, ok = red("✗"), false
		}
		fmt.Printf("%s %-22s %s %s\n", mark, what, enables, dim(detail))
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		row(false, "Go toolchain", "builds your code", "go is not on PATH: install Go 1.26")
		return 1
	}
	out, _ := exec.Command(goBin, "version").Output()
	row(true, "Go toolchain", "builds your code", string(out[:len(out)-1]))

	cat, err := loadCatalog(*dir)
	if err != nil {
		row(false, "exercises", "what there is to solve", err.Error())
		return 1
	}
	row(true, "exercises", "what there is to solve", fmt.Sprintf("%d exercises in %d chapters", len(cat.Exercises), len(cat.Chapters)))
	if len(cat.Exercises) == 0 {
		return 1
	}
	// No cache: the doctor must really build and run.
	eng, err := judge.NewEngine(judge.Options{})
	if err != nil {
		row(false, "judge engine", "runs judgements", err.Error())
		return 1
	}
	defer eng.Close()
	ex := cat.Exercises[0]
	start := time.Now()
	v := eng.Judge(context.Background(), judge.Submission{Exercise: ex, Code: ex.Solution, Mode: verdict.ModeRun})
	switch {
	case v.Outcome == verdict.OutcomeCompileError || v.Outcome == verdict.OutcomeInternalError && v.Timings.CompileMs == 0:
		row(false, "wasip1 build", "turns Go into WebAssembly", v.Summary())
	default:
		row(true, "wasip1 build", "turns Go into WebAssembly", fmt.Sprintf("%d ms, linked by %s", v.Timings.BuildMs, eng.Linker()))
		if v.Outcome == verdict.OutcomeAccepted {
			row(true, "wazero run", "runs it against the simulated cluster", fmt.Sprintf("%d sample tests of %d in %v", len(v.Tests), ex.Number, time.Since(start).Round(time.Millisecond)))
		} else {
			row(false, "wazero run", "runs it against the simulated cluster", string(v.Outcome)+": "+v.Message+" "+v.FirstFailure().Message)
		}
	}
	if !ok {
		return 1
	}
	return 0
}
