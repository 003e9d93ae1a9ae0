package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// printTestList prints an exercise's tests, one a line: the name, whether
// it is a sample (what --run runs) and the faults it plans.
func printTestList(w io.Writer, ex *exercise.Exercise) {
	width := 0
	for _, t := range ex.Suite.Tests {
		width = max(width, len([]rune(t.Name)))
	}
	for _, t := range ex.Suite.Tests {
		kind := "      "
		if t.Sample {
			kind = "sample"
		}
		faults := "no faults"
		if len(t.Faults) > 0 {
			faults = "faults: " + names(t.Faults)
		}
		pad := strings.Repeat(" ", width-len([]rune(t.Name)))
		fmt.Fprintf(w, "%s%s  %s  %s\n", t.Name, pad, kind, faults)
	}
	if k := ex.GeneratedTests(); k > 0 {
		fmt.Fprintf(w, "generated 1 .. generated %d: scenarios drawn from the seed, in submit mode only\n", k)
	}
}

// checkTestFlags checks --test and --faults against the exercise before
// anything is built. A non-empty answer is a usage error to print.
func checkTestFlags(ex *exercise.Exercise, only string, runOnly bool, faults string) string {
	if only != "" && !ex.IsGeneratedTest(only) {
		var found *exercise.Test
		for _, t := range ex.Suite.Tests {
			if t.Name == only {
				found = t
			}
		}
		if found == nil {
			var b strings.Builder
			fmt.Fprintf(&b, "%s has no test named %s.", ex.ID(), shellQuote(only))
			if s := closestTest(ex, only); s != "" {
				fmt.Fprintf(&b, " Did you mean --test %s?", shellQuote(s))
			}
			fmt.Fprintf(&b, "\nIts tests (also: judge test %s --list):\n", ex.ID())
			for _, t := range ex.Suite.Tests {
				fmt.Fprintf(&b, "  %s\n", t.Name)
			}
			return strings.TrimRight(b.String(), "\n")
		}
		if runOnly && !found.Sample {
			return fmt.Sprintf("%s is not a sample test, and --run runs only those; drop --run to run it.", shellQuote(only))
		}
	}
	if faults != "" && faults != "none" {
		for _, f := range strings.Split(faults, ",") {
			if !verdict.Fault(f).Known() {
				return fmt.Sprintf("--faults: no fault named %q. Known faults: %s (or none, for no faults).", f, names(verdict.Faults))
			}
		}
	}
	return ""
}

// closestTest is the test name nearest to a mistyped one, or "" when none
// is near: the only one that contains it, or one a few edits away.
func closestTest(ex *exercise.Exercise, typed string) string {
	typed = strings.ToLower(strings.TrimSpace(typed))
	var holding []string
	best, bestD := "", -1
	for _, t := range ex.Suite.Tests {
		name := strings.ToLower(t.Name)
		if typed != "" && strings.Contains(name, typed) {
			holding = append(holding, t.Name)
		}
		if d := editDistance(typed, name); bestD < 0 || d < bestD {
			best, bestD = t.Name, d
		}
	}
	if len(holding) == 1 {
		return holding[0]
	}
	if bestD <= max(2, len([]rune(typed))/3) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// replayer turns a verdict's replay command (which never names a file, so
// that a verdict does not depend on where the learner keeps theirs) into
// the command to type here: with the file the learner gave, and the
// exercise folder an author gave.
// A replay of a run with --faults keeps them, unless it names its own.
func replayer(ex *exercise.Exercise, file, exercisesDir, faults string) func(string) string {
	var extra string
	if file != "" {
		if strings.HasPrefix(file, "-") {
			file = "./" + file // not a flag
		}
		extra += " " + shellWord(file)
	}
	prefix := "judge test " + ex.ID()
	return func(replay string) string {
		rest, ok := strings.CutPrefix(replay, prefix)
		if !ok || replay == "" {
			return replay
		}
		out := prefix + extra + rest
		if faults != "" && !strings.Contains(rest, " --faults ") {
			out += " --faults " + shellWord(faults)
		}
		if exercisesDir != "" {
			out += " --exercises " + shellWord(exercisesDir)
		}
		return out
	}
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./+,:=@%^-]+$`)

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return shellQuote(s)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
