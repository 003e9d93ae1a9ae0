package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"ctrljudge/judge"
)

func cmdTest(args []string) int {
	fs, dir := newFlags("test")
	runOnly := fs.Bool("run", false, "run the sample tests only")
	seed := fs.Uint64("seed", judge.DefaultSeed, "the seed that drives every choice of the simulation")
	only := fs.String("test", "", "run only the test with this `NAME`")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	faults := fs.String("faults", "", "replace the tests' planned faults with this comma-separated `LIST` (none for no faults)")
	ex, rest, rc := findExercise(fs, dir, args, 2, "test ID [FILE]")
	if ex == nil {
		return rc
	}
	var file string
	var err error
	if len(rest) == 1 {
		file = rest[0]
	} else if file, err = findWorkspaceFile(ex); err != nil {
		return fail("%v", err)
	}
	code, err := os.ReadFile(file)
	// An exercise's own files (solution.go, mutants) carry a build line
	// that the judge refuses in learner code; authors test them as is.
	code = judge.LearnerSource(code)
	if err != nil {
		return fail("%v", err)
	}
	eng, err := newEngine()
	if err != nil {
		return fail("%v", err)
	}
	defer eng.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	mode := judge.ModeSubmit
	if *runOnly {
		mode = judge.ModeRun
	}
	sub := judge.Submission{Exercise: ex, Code: code, FileName: filepath.Base(file), Mode: mode, Seed: *seed, Only: *only}
	if *faults != "" {
		sub.SetFaults = true
		if *faults != "none" {
			sub.Faults = strings.Split(*faults, ",")
		}
	}
	if !*asJSON {
		fmt.Printf("%s %s\n", bold(fmt.Sprintf("%d. %s", ex.Number, ex.Title)), dim(fmt.Sprintf("(%s, seed %d)", mode, *seed)))
		sub.Progress = func(ev judge.Event) {
			if ev.Phase == "test" {
				printTest(os.Stdout, ev.Test)
			}
		}
	}
	v := eng.Judge(ctx, sub)
	if *asJSON {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fail("%v", err)
		}
		os.Stdout.Write(append(b, '\n'))
	} else {
		printSummary(os.Stdout, v)
	}
	if v.Outcome != judge.OutcomeAccepted {
		return 1
	}
	return 0
}

// newEngine keeps built modules in CTRLJUDGE_CACHE, or the user's cache
// folder, so a second `judge test` of the same file is instant.
func newEngine() (*judge.Engine, error) {
	opts := judge.Options{CacheDir: os.Getenv("CTRLJUDGE_CACHE")}
	if d, err := os.UserCacheDir(); err == nil && opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(d, "ctrljudge")
	}
	return judge.NewEngine(opts)
}

// findWorkspaceFile finds the learner's file: in the exercise's workspace
// folder below the current one, or in the current folder itself.
func findWorkspaceFile(ex *judge.Exercise) (string, error) {
	for _, p := range []string{filepath.Join(workspaceDir(ex), ex.FileName()), ex.FileName()} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no " + ex.FileName() + " here or in " + workspaceDir(ex) + "/; run `judge start " + ex.ID() + "` or name the file")
}

func printTest(w io.Writer, t *judge.TestResult) {
	mark, name := green("✓"), t.Name
	if t.Status != judge.StatusPass {
		mark = red("✗")
	}
	tag := ""
	if t.Sample {
		tag = dim(" [sample]")
	}
	survived := ""
	if t.Status == judge.StatusPass && len(t.FaultClasses) > 0 {
		// Say which faults a pass withstood, so it means something.
		survived = dim(" · survived " + strings.Join(t.FaultClasses, ", "))
	}
	fmt.Fprintf(w, "%s %s%s %s%s\n", mark, name, tag, dim(fmt.Sprintf("(%d ms)", t.DurationMs)), survived)
	if t.Status == judge.StatusPass {
		return
	}
	in := "    "
	fmt.Fprintf(w, "%s%s %s\n", in, yellow(t.Oracle+":"), indentRest(t.Message, in))
	if t.Hint != "" {
		fmt.Fprintf(w, "%s%s %s\n", in, dim("hint:"), t.Hint)
	}
	if len(t.Faults) > 0 {
		fmt.Fprintf(w, "%sfaults injected in this run:\n", in)
		for _, f := range t.Faults {
			fmt.Fprintf(w, "%s  - %s\n", in, f)
		}
		for _, c := range t.FaultClasses {
			if h := judge.FaultHint[c]; h != "" {
				fmt.Fprintf(w, "%s  %s %s\n", in, dim("why:"), h)
			}
		}
	}
	fmt.Fprintf(w, "%sseed %d · replay: %s\n", in, t.Seed, t.Replay)
	if sh := t.Shrunk; sh != nil {
		if len(sh.Faults) == 0 {
			fmt.Fprintf(w, "%s%s it fails the same way with no faults at all: %s\n", in, yellow("smallest case:"), sh.Replay)
		} else {
			fmt.Fprintf(w, "%s%s it fails the same way with only %s: %s\n", in, yellow("smallest case:"), strings.Join(sh.Faults, ", "), sh.Replay)
		}
	}
	if len(t.Trace) > 0 {
		fmt.Fprintf(w, "%strace (last %d steps):\n", in, len(t.Trace))
		for _, l := range t.Trace {
			fmt.Fprintf(w, "%s  %8s  %-10s %s\n", in, fmtMs(l.T), l.Actor, l.Event)
		}
	}
	if t.Output != "" {
		fmt.Fprintf(w, "%syour controller's output:\n", in)
		for _, l := range strings.Split(strings.TrimRight(t.Output, "\n"), "\n") {
			fmt.Fprintf(w, "%s  | %s\n", in, l)
		}
		if t.OutputTruncated {
			fmt.Fprintf(w, "%s  | %s\n", in, dim("… output truncated"))
		}
	}
}

func indentRest(s, in string) string { return strings.ReplaceAll(s, "\n", "\n"+in) }

func fmtMs(ms int64) string {
	return "t=" + strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
}

func printSummary(w io.Writer, v *judge.Verdict) {
	switch v.Outcome {
	case judge.OutcomeCompileError:
		fmt.Fprintln(w, red("compile error:"), v.Message)
		for _, d := range v.Diagnostics {
			loc := d.File + ":" + strconv.Itoa(d.Line)
			if d.Column > 0 {
				loc += ":" + strconv.Itoa(d.Column)
			}
			fmt.Fprintf(w, "  %s: %s\n", loc, d.Message)
		}
	case judge.OutcomeInternalError:
		fmt.Fprintln(w, red("internal error:"), v.Message, dim("(not your fault; nothing was counted)"))
	}
	verdict := green("accepted")
	if v.Outcome != judge.OutcomeAccepted {
		verdict = red(strings.ReplaceAll(v.Outcome, "_", " "))
	}
	fmt.Fprintf(w, "%s %s\n", verdict, dim(fmt.Sprintf("(build %d ms, compile %d ms, run %d ms)", v.Timings.BuildMs, v.Timings.CompileMs, v.Timings.RunMs)))
	fmt.Fprintf(w, "%d passed, %d failed\n", v.Passed, v.Failed)
}
