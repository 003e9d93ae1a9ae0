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
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

func cmdTest(args []string) int {
	// The engine asks the go command about the toolchain (a process of
	// its own, 20 ms) while the exercise is found and read.
	pending := startEngine()
	defer pending.discard()
	fs, dir := newFlags("test")
	runOnly := fs.Bool("run", false, "run the sample tests only")
	seed := fs.Uint64("seed", judge.DefaultSeed, "the seed that drives every choice of the simulation")
	only := fs.String("test", "", "run only the test with this `NAME`")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	faults := fs.String("faults", "", "replace the tests' planned faults with this comma-separated `LIST` (none for no faults)")
	listTests := fs.Bool("list", false, "list the tests: name, sample or not, planned faults")
	scenario := fs.String("scenario", "", "run only the test in `FILE` (tests.yaml syntax): a generated scenario a verdict printed")
	ex, rest, rc := findExercise(fs, dir, args, 2, "test ID [FILE] [--run] [--seed N] [--test NAME | --scenario FILE] [--faults LIST] [--json] | test ID --list")
	if ex == nil {
		return rc
	}
	if *listTests {
		printTestList(os.Stdout, ex)
		return 0
	}
	// A mistyped name or fault is found now, not after a build.
	if msg := checkTestFlags(ex, *only, *runOnly, *faults); msg != "" {
		return usageErr("%s", msg)
	}
	var scenarioYAML []byte
	if *scenario != "" {
		if *only != "" || *runOnly {
			return usageErr("--scenario runs the one test in its file; it goes without --test and --run")
		}
		b, err := os.ReadFile(*scenario)
		if err != nil {
			return fail("%v", err)
		}
		if _, err := exercise.ParseScenario(*scenario, b, judge.Checks); err != nil {
			return fail("%v", err)
		}
		scenarioYAML = b
	}
	var file, given string
	var err error
	if len(rest) == 1 {
		file, given = rest[0], rest[0]
	} else if file, err = findWorkspaceFile(ex); err != nil {
		return fail("%v", err)
	}
	replay := replayer(ex, given, *dir, *faults)
	code, err := os.ReadFile(file)
	// An exercise's own files (solution.go, mutants) carry a build line
	// that the judge refuses in learner code; authors test them as is.
	code = exercise.LearnerSource(code)
	if err != nil {
		return fail("%v", err)
	}
	eng, err := pending.take()
	if err != nil {
		return fail("%v", err)
	}
	defer eng.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	mode := verdict.ModeSubmit
	if *runOnly {
		mode = verdict.ModeRun
	}
	sub := judge.Submission{Exercise: ex, Code: code, FileName: filepath.Base(file), Mode: mode, Seed: *seed, Only: *only, Scenario: scenarioYAML}
	if *faults != "" {
		sub.SetFaults = true
		if *faults != "none" {
			for _, f := range strings.Split(*faults, ",") {
				sub.Faults = append(sub.Faults, verdict.Fault(f))
			}
		}
	}
	if !*asJSON {
		fmt.Printf("%s %s\n", bold(fmt.Sprintf("%d. %s", ex.Number, ex.Title)), dim(fmt.Sprintf("(%s, seed %d)", mode, *seed)))
		sub.Progress = func(ev verdict.Event) {
			if ev.Phase == verdict.PhaseTest {
				printTest(os.Stdout, ev.Test, replay)
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
	if v.Outcome != verdict.OutcomeAccepted {
		return 1
	}
	return 0
}

// pendingEngine is an engine being started in the background.
type pendingEngine struct {
	done  chan struct{}
	eng   *judge.Engine
	err   error
	taken bool
}

func startEngine() *pendingEngine {
	p := &pendingEngine{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.eng, p.err = newEngine()
	}()
	return p
}

// take waits for the engine; the caller closes it.
func (p *pendingEngine) take() (*judge.Engine, error) {
	<-p.done
	p.taken = true
	return p.eng, p.err
}

// discard closes the engine if nobody took it.
func (p *pendingEngine) discard() {
	<-p.done
	if !p.taken && p.eng != nil {
		p.eng.Close()
	}
}

// newEngine keeps built modules in CTRLJUDGE_CACHE, or the user's cache
// folder, so a second `judge test` of the same file is instant.
func newEngine() (*judge.Engine, error) {
	collectLate()
	// The first use of a Go version compiles its standard library for
	// WebAssembly: say so on stderr, so the wait is not a mystery.
	opts := judge.Options{CacheDir: os.Getenv("CTRLJUDGE_CACHE"), Progress: os.Stderr}
	if d, err := os.UserCacheDir(); err == nil && opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(d, "ctrljudge")
	}
	return judge.NewEngine(opts)
}

// findWorkspaceFile finds the learner's file: in the exercise's workspace
// folder below the current one, or in the current folder itself.
func findWorkspaceFile(ex *exercise.Exercise) (string, error) {
	for _, p := range []string{filepath.Join(workspaceDir(ex), ex.FileName()), ex.FileName()} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no " + ex.FileName() + " here or in " + workspaceDir(ex) + "/; run `judge start " + ex.ID() + "` or name the file")
}

// printTest prints one test's result; replay turns the verdict's replay
// commands into the ones to type here.
func printTest(w io.Writer, t *verdict.TestResult, replay func(string) string) {
	// Everything from the verdict passes through verdict.Inert: the
	// learner's code chose much of it, and a terminal obeys escapes.
	mark, name := green("✓"), verdict.Inert(t.Name)
	if t.Status != verdict.StatusPass {
		mark = red("✗")
	}
	tag := ""
	if t.Sample {
		tag = dim(" [sample]")
	}
	survived := ""
	if t.Status == verdict.StatusPass && len(t.FaultClasses) > 0 {
		// Say which faults a pass withstood, so it means something.
		survived = dim(" · survived " + names(t.FaultClasses))
	}
	fmt.Fprintf(w, "%s %s%s %s%s\n", mark, name, tag, dim(fmt.Sprintf("(%d ms)", t.DurationMs)), survived)
	if t.Status == verdict.StatusPass {
		return
	}
	in := "    "
	fmt.Fprintf(w, "%s%s %s\n", in, yellow(t.Oracle.Title()+":"), indentRest(verdict.Inert(t.Message), in))
	if t.Hint != "" {
		fmt.Fprintf(w, "%s%s %s\n", in, dim("hint:"), verdict.Inert(t.Hint))
	}
	if len(t.Faults) > 0 {
		fmt.Fprintf(w, "%sfaults injected in this run:\n", in)
		for _, f := range t.Faults {
			fmt.Fprintf(w, "%s  - %s\n", in, verdict.Inert(f))
		}
		for _, c := range t.FaultClasses {
			fmt.Fprintf(w, "%s  %s %s\n", in, dim("why:"), c.Explain())
		}
	}
	fmt.Fprintf(w, "%sseed %d · replay: %s\n", in, t.Seed, verdict.Inert(replay(t.Replay)))
	if sh := t.Shrunk; sh != nil {
		if len(sh.Faults) == 0 {
			fmt.Fprintf(w, "%s%s it fails the same way with no faults at all: %s\n", in, yellow("smallest case:"), verdict.Inert(replay(sh.Replay)))
		} else {
			fmt.Fprintf(w, "%s%s it fails the same way with only %s: %s\n", in, yellow("smallest case:"), names(sh.Faults), verdict.Inert(replay(sh.Replay)))
		}
	}
	if t.Scenario != "" {
		what := "this scenario, as it ran"
		if t.Shrunk != nil {
			what = "the smallest scenario found that fails the same way"
		}
		fmt.Fprintf(w, "%s%s %s; save it to %s to replay it, or paste it under tests: in tests.yaml:\n", in, yellow("scenario:"), what, "scenario.yaml")
		for _, l := range strings.Split(strings.TrimRight(t.Scenario, "\n"), "\n") {
			fmt.Fprintf(w, "%s  %s\n", in, verdict.Inert(l))
		}
	}
	if len(t.Trace) > 0 {
		fmt.Fprintf(w, "%strace (last %d steps):\n", in, len(t.Trace))
		for _, l := range t.Trace {
			fmt.Fprintf(w, "%s  %8s  %-10s %s\n", in, fmtMs(l.T), verdict.Inert(l.Actor), indentRest(verdict.Inert(l.Event), in+strings.Repeat(" ", 23)))
		}
	}
	if t.Output != "" {
		fmt.Fprintf(w, "%syour controller's output:\n", in)
		for _, l := range strings.Split(strings.TrimRight(t.Output, "\n"), "\n") {
			fmt.Fprintf(w, "%s  | %s\n", in, verdict.Inert(l))
		}
		if t.OutputTruncated {
			fmt.Fprintf(w, "%s  | %s\n", in, dim("… output truncated"))
		}
	}
	if t.Cut != "" {
		fmt.Fprintf(w, "%s%s\n", in, dim(verdict.Inert(t.Cut)))
	}
}

func indentRest(s, in string) string { return strings.ReplaceAll(s, "\n", "\n"+in) }

func fmtMs(ms int64) string {
	return "t=" + strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
}

func printSummary(w io.Writer, v *verdict.Verdict) {
	switch v.Outcome {
	case verdict.OutcomeCompileError:
		fmt.Fprintln(w, red(v.Outcome.Title()+":"), verdict.Inert(v.Message))
		for _, d := range v.Diagnostics {
			loc := d.File + ":" + strconv.Itoa(d.Line)
			if d.Column > 0 {
				loc += ":" + strconv.Itoa(d.Column)
			}
			fmt.Fprintf(w, "  %s: %s\n", verdict.Inert(loc), verdict.Inert(d.Message))
		}
	case verdict.OutcomeInternalError, verdict.OutcomeNotJudged:
		fmt.Fprintln(w, red(v.Outcome.Title()+":"), verdict.Inert(v.Message), dim("("+v.Outcome.Explain()+")"))
	}
	title := green(v.Outcome.Title())
	if v.Outcome != verdict.OutcomeAccepted {
		title = red(v.Outcome.Title())
	}
	fmt.Fprintf(w, "%s %s\n", title, dim(fmt.Sprintf("(build %d ms, compile %d ms, run %d ms)", v.Timings.BuildMs, v.Timings.CompileMs, v.Timings.RunMs)))
	fmt.Fprintf(w, "%d passed, %d failed\n", v.Passed, v.Failed)
	if v.Truncated {
		fmt.Fprintln(w, dim(verdict.Inert(v.Cut)))
	}
}

// names lists faults, or other named strings, with commas.
func names[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
