package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// cmdRegress keeps what a seed found: it judges each FILE at the seeds
// given, and where a file is rejected at some seeds and accepted at
// others, it saves the shrunk scenario that rejected it into the
// exercise's regressions folder, where every later seed runs it. The
// author reviews the files it writes (the scenario must be a fair one)
// before committing them.
func cmdRegress(args []string) int {
	fs, dir := newFlags("regress")
	seeds := fs.String("seeds", "1-5", "judge at the seeds `A-B`")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if *dir == "" {
		return usageErr("regress writes into the exercises' folders: say which with --exercises DIR (exercises, in a checkout)")
	}
	if len(pos) < 2 {
		return usageErr("usage: judge regress --exercises DIR ID FILE...")
	}
	lo, hi, err := seedRange(*seeds)
	if err != nil {
		return usageErr("--seeds: %v", err)
	}
	cat, err := loadCatalog(*dir)
	if err != nil {
		return fail("%v", err)
	}
	ex, err := cat.Find(pos[0])
	if err != nil {
		return fail("%v", err)
	}
	eng, err := newEngine()
	if err != nil {
		return fail("%v", err)
	}
	defer eng.Close()
	ctx := context.Background()
	bad := 0
	for _, file := range pos[1:] {
		code, err := os.ReadFile(file)
		if err != nil {
			return fail("%v", err)
		}
		msg, err := regressFile(ctx, eng, ex, *dir, file, code, lo, hi)
		if err != nil {
			bad++
			fmt.Printf("%s %s: %v\n", red("✗"), file, err)
			continue
		}
		fmt.Printf("%s %s: %s\n", green("✓"), file, msg)
	}
	if bad > 0 {
		return 1
	}
	return 0
}

// regressFile judges one file at seeds lo..hi and saves a scenario if its
// detection depends on the seed.
func regressFile(ctx context.Context, eng *judge.Engine, ex *exercise.Exercise, dir, file string, code []byte, lo, hi uint64) (string, error) {
	var failed, passed []uint64
	var scenario string
	for seed := lo; seed <= hi; seed++ {
		v := eng.Judge(ctx, judge.Submission{Exercise: ex, Code: code, FileName: filepath.Base(file), Mode: verdict.ModeSubmit, Seed: seed})
		switch v.Outcome {
		case verdict.OutcomeAccepted:
			passed = append(passed, seed)
			continue
		case verdict.OutcomeCompileError, verdict.OutcomeInternalError, verdict.OutcomeNotJudged:
			return "", fmt.Errorf("seed %d: %s: %s", seed, v.Outcome, v.Summary())
		}
		failed = append(failed, seed)
		if scenario == "" {
			scenario = keptScenario(ex, v, seed)
		}
	}
	switch {
	case len(failed) == 0:
		return "accepted at every seed: nothing to keep", nil
	case len(passed) == 0:
		return "rejected at every seed: nothing to keep", nil
	case scenario == "":
		return "", fmt.Errorf("rejected at seeds %v, accepted at %v, but by no test a scenario can keep", failed, passed)
	}
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	name := "regression: " + stem
	t, err := exercise.ParseScenario(file, []byte(scenario), judge.Checks)
	if err != nil {
		return "", err
	}
	t.Name = name
	text := "# Kept by judge regress from " + filepath.Base(file) + ": rejected at seeds " + seedList(failed) +
		", accepted at " + seedList(passed) + ".\n# Review it: every submission now runs it.\n" + t.YAML()
	// The reference solution must pass it, and the file must fail it.
	sol := eng.Judge(ctx, judge.Submission{Exercise: ex, Code: ex.Solution, Mode: verdict.ModeSubmit, Seed: 1, Scenario: []byte(t.YAML())})
	if sol.Outcome != verdict.OutcomeAccepted {
		return "", fmt.Errorf("the reference solution fails the scenario (%s): not kept", sol.Summary())
	}
	again := eng.Judge(ctx, judge.Submission{Exercise: ex, Code: code, FileName: filepath.Base(file), Mode: verdict.ModeSubmit, Seed: 1, Scenario: []byte(t.YAML())})
	if again.Outcome == verdict.OutcomeAccepted {
		return "", errors.New("the scenario alone does not reject the file: not kept")
	}
	folder := filepath.Join(dir, filepath.FromSlash(ex.Dir), exercise.RegressionsDir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(folder, stem+".yaml")
	if _, err := os.Stat(out); err == nil {
		return "", fmt.Errorf("%s exists: not overwritten", out)
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("rejected at seeds %s, accepted at %s: kept %s (review it)", seedList(failed), seedList(passed), out), nil
}

// keptScenario is what a rejecting verdict offers to keep: its first
// failing generated scenario as printed (shrunk where it was first), or
// else its first failing named test, pinned to the seed it ran at, with
// the faults its shrinking kept.
func keptScenario(ex *exercise.Exercise, v *verdict.Verdict, seed uint64) string {
	for _, r := range v.Tests {
		if r.Status != verdict.StatusPass && r.Scenario != "" {
			return r.Scenario
		}
	}
	first := v.FirstFailure()
	for _, t := range ex.Suite.Tests {
		if t.Name != first.Name || t.Regression {
			continue
		}
		c := *t
		c.Seed, c.Runtime, c.Sample = t.SeedFor(seed), judge.RuntimeKey(seed), false
		if first.Shrunk != nil {
			c.Faults = first.Shrunk.Faults
		}
		return c.YAML()
	}
	return ""
}

func seedRange(s string) (lo, hi uint64, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	if lo, err = strconv.ParseUint(a, 10, 64); err != nil {
		return 0, 0, err
	}
	if hi, err = strconv.ParseUint(b, 10, 64); err != nil {
		return 0, 0, err
	}
	if lo < 1 || hi < lo || hi-lo > 100 {
		return 0, 0, fmt.Errorf("want A-B with 1 <= A <= B, at most 100 seeds")
	}
	return lo, hi, nil
}

func seedList(s []uint64) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(parts, ", ")
}
