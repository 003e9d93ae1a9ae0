package judge

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The bug corpus (testdata/bugs/<exercise>/*.go) holds reconcilers written
// the way learners write them, from the statement and the starter rather
// than as mutants of solution.go: each buggy file carries one realistic bug
// of the kinds issue 9 lists, and each correct one does the job in its own
// style. It measures the judge's power on code nobody tuned a test for.
//
// The first line of each file says which it is: "// bug: ..." or
// "// correct: ...". testdata/bugs/escapes.txt lists, one per line as
// "<exercise>/<file>: why", the bugs the judge does not yet catch at every
// seed. The list is a ratchet: a bug missing from it must be caught at
// every seed, and a bug on it must still escape at some seed, so that the
// list can only shrink as the judge gets stronger.
//
// The table (catch rate per exercise and overall) is logged; read it with
//
//	go test -run TestRealisticBugsAreCaught -v ./judge/
//
// and narrow it to one exercise with -run 'TestRealisticBugsAreCaught/171'.
// A bug listed in escapes.txt is judged only until its first escape, which
// is all the ratchet needs; with CTRLJUDGE_CORPUS_FULL=1 in the environment
// every file is judged at every seed, so that the table also counts the
// seeds at which each listed bug is caught ("seed luck").

// corpusSeeds are the seeds every file is judged at: detection must not
// depend on seed luck. With CTRLJUDGE_CORPUS_FULL=1, correct files are
// judged at fullCorrectSeeds: a correct file must be accepted at every
// seed a learner may meet.
var (
	corpusSeeds      = []uint64{1, 2, 3, 4, 5}
	fullCorrectSeeds = seedRange(1, 20)
)

func seedRange(a, b uint64) []uint64 {
	var out []uint64
	for s := a; s <= b; s++ {
		out = append(out, s)
	}
	return out
}

// A corpus is a folder of learner-style files, one folder per exercise,
// with its own ratchet of escapes.
type corpus struct{ dir, escapes string }

var (
	// The named corpus: bugs of the classes the judge's issues named.
	namedCorpus = corpus{"testdata/bugs", "testdata/bugs/escapes.txt"}
	// The blind corpus: bugs and correct files written by people who had
	// read only the statement (what `judge start` writes: README.md, the
	// starter, the SDK), never the tests, the solution or the judge.
	blindCorpus = corpus{"testdata/blind", "testdata/blind/escapes.txt"}
)

type corpusFile struct {
	exercise, name string // "171", "labels-not-owner.go"
	bug            bool   // false: a correct variant
	what           string // the first line's words after "bug:" or "correct:"
	code           []byte
}

func (f corpusFile) key() string { return f.exercise + "/" + f.name }

// corpusResult is one file judged at every seed.
type corpusResult struct {
	seeds    []uint64 // the seeds it is judged at
	judged   int      // seeds judged (fewer than all when stopped at an escape)
	failedAt []uint64 // seeds at which the verdict was not accepted
	oracles  []string // first failing oracle at each failing seed, e.g. "convergence"
	problems []string // verdicts that say nothing about the code
}

func loadCorpus(t *testing.T, c corpus) []corpusFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(c.dir, "*", "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus files under %s (%v)", c.dir, err)
	}
	var files []corpusFile
	for _, p := range paths {
		code, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(code), "\n")
		f := corpusFile{exercise: filepath.Base(filepath.Dir(p)), name: filepath.Base(p), code: code}
		switch {
		case strings.HasPrefix(first, "// bug: "):
			f.bug, f.what = true, strings.TrimPrefix(first, "// bug: ")
		case strings.HasPrefix(first, "// correct: "):
			f.what = strings.TrimPrefix(first, "// correct: ")
		default:
			t.Fatalf("%s:1: the first line must be \"// bug: ...\" or \"// correct: ...\", not %q", p, first)
		}
		files = append(files, f)
	}
	return files
}

// loadEscapes reads the ratchet: key → reason.
func loadEscapes(t *testing.T, escapesFile string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(escapesFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, ok := strings.Cut(line, ": ")
		if !ok || strings.TrimSpace(reason) == "" {
			t.Fatalf("%s:%d: want \"<exercise>/<file>: reason\", got %q", escapesFile, n, line)
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s:%d: %s listed twice", escapesFile, n, key)
		}
		out[key] = reason
	}
	return out
}

// TestRealisticBugsAreCaught judges every corpus file in submit mode at
// every seed: correct variants must be accepted at each, buggy ones
// rejected at each unless escapes.txt lists them, and those listed must
// still escape somewhere.
func TestRealisticBugsAreCaught(t *testing.T) { testCorpus(t, namedCorpus) }

// TestBlindCorpusIsCaught is the same ratchet over the blind corpus.
func TestBlindCorpusIsCaught(t *testing.T) { testCorpus(t, blindCorpus) }

func testCorpus(t *testing.T, c corpus) {
	eng := engine(t)
	cat := catalog(t)
	files := loadCorpus(t, c)
	escapes := loadEscapes(t, c.escapes)
	escapesFile, corpusDir := c.escapes, c.dir
	start := time.Now()

	byKey := map[string]corpusFile{}
	var exIDs []string
	for _, f := range files {
		byKey[f.key()] = f
		if !slices.Contains(exIDs, f.exercise) {
			exIDs = append(exIDs, f.exercise)
		}
	}
	for _, key := range text.SortedKeys(escapes) {
		if f, ok := byKey[key]; !ok {
			t.Errorf("%s lists %s, which is not in the corpus", escapesFile, key)
		} else if !f.bug {
			t.Errorf("%s lists %s, a correct variant: only bugs may escape", escapesFile, key)
		}
	}

	var mu sync.Mutex
	results := map[string]*corpusResult{}
	for _, id := range exIDs {
		ex, err := cat.Find(id)
		if err != nil {
			t.Fatalf("%s/%s: %v", corpusDir, id, err)
		}
		t.Run(id, func(t *testing.T) {
			for _, f := range files {
				if f.exercise != id {
					continue
				}
				t.Run(strings.TrimSuffix(f.name, ".go"), func(t *testing.T) {
					t.Parallel()
					_, listed := escapes[f.key()]
					full := os.Getenv("CTRLJUDGE_CORPUS_FULL") != ""
					seeds := corpusSeeds
					if full && !f.bug {
						seeds = fullCorrectSeeds
					}
					r := judgeCorpusFile(eng, ex, f, listed && !full, seeds)
					mu.Lock()
					results[f.key()] = r
					mu.Unlock()
					checkCorpusFile(t, f, r, escapes, escapesFile)
				})
			}
		})
	}
	t.Log(corpusTable(c.dir, files, results, escapes))
	t.Logf("judged %d files at %d seeds each in %s", len(results), len(corpusSeeds), time.Since(start).Round(time.Second))
}

// judgeCorpusFile judges one file at every seed, one seed after another:
// the files themselves run side by side. untilEscape stops at the first
// seed that accepts the file.
func judgeCorpusFile(eng *Engine, ex *exercise.Exercise, f corpusFile, untilEscape bool, seeds []uint64) *corpusResult {
	r := &corpusResult{seeds: seeds}
	for _, seed := range seeds {
		r.judged++
		v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: f.code, FileName: f.name, Mode: verdict.ModeSubmit, Seed: seed})
		for try := 0; try < 2 && v.Outcome == verdict.OutcomeNotJudged; try++ {
			// The wall-clock safety net fired on a busy machine: the
			// verdict says nothing about the code, so judge it again.
			v = eng.Judge(context.Background(), Submission{Exercise: ex, Code: f.code, FileName: f.name, Mode: verdict.ModeSubmit, Seed: seed})
		}
		switch v.Outcome {
		case verdict.OutcomeAccepted:
			if untilEscape {
				return r
			}
		case verdict.OutcomeCompileError, verdict.OutcomeInternalError, verdict.OutcomeNotJudged:
			// A compile error catches nothing, and the judge failing or
			// being too busy says nothing about the code.
			r.problems = append(r.problems, fmt.Sprintf("seed %d: %s: %s %v", seed, v.Outcome, v.Summary(), v.Diagnostics))
		default:
			first := v.FirstFailure()
			r.failedAt = append(r.failedAt, seed)
			r.oracles = append(r.oracles, string(first.Oracle))
		}
	}
	return r
}

func checkCorpusFile(t *testing.T, f corpusFile, r *corpusResult, escapes map[string]string, escapesFile string) {
	for _, p := range r.problems {
		t.Errorf("%s: %s", f.key(), p)
	}
	if len(r.problems) > 0 {
		return
	}
	reason, listed := escapes[f.key()]
	caught := len(r.failedAt) == len(r.seeds)
	if f.bug && listed && r.judged < len(r.seeds) {
		t.Logf("%s escapes at seed %d (listed: %s)", f.key(), r.seeds[r.judged-1], reason)
		return
	}
	switch {
	case !f.bug && len(r.failedAt) > 0:
		t.Errorf("%s is correct (%s) but was rejected at seeds %v (first oracles %v): a judge bug; tell the lead, this file is not wrong",
			f.key(), f.what, r.failedAt, r.oracles)
	case f.bug && listed && caught:
		t.Errorf("%s is now caught at every seed (%s): remove it from %s", f.key(), strings.Join(uniq(r.oracles), ", "), escapesFile)
	case f.bug && !listed && !caught:
		t.Errorf("%s (%s) escapes at seeds %v, caught only at %v: the judge lost power (or list it in %s with a reason)",
			f.key(), f.what, missingSeeds(r.seeds, r.failedAt), r.failedAt, escapesFile)
	case f.bug && listed:
		t.Logf("%s still escapes at seeds %v (listed: %s)", f.key(), missingSeeds(r.seeds, r.failedAt), reason)
	}
}

// uniq keeps the first of each string, in order.
func uniq(l []string) []string {
	var out []string
	for _, s := range l {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func missingSeeds(seeds, failed []uint64) []uint64 {
	var out []uint64
	for _, s := range seeds {
		if !slices.Contains(failed, s) {
			out = append(out, s)
		}
	}
	return out
}

// corpusTable is the catch rate per exercise and overall, then one line
// per bug: caught means rejected at every seed.
func corpusTable(dir string, files []corpusFile, results map[string]*corpusResult, escapes map[string]string) string {
	type row struct{ bugs, caught, some, correct, accepted int }
	rows := map[string]*row{}
	var ids []string
	var total row
	var lines []string
	for _, f := range files {
		r, ok := results[f.key()]
		if !ok {
			continue // filtered out by -run
		}
		if rows[f.exercise] == nil {
			rows[f.exercise] = &row{}
			ids = append(ids, f.exercise)
		}
		x := rows[f.exercise]
		n := len(r.failedAt)
		if !f.bug {
			x.correct++
			if n == 0 && len(r.problems) == 0 {
				x.accepted++
			}
			continue
		}
		x.bugs++
		mark := "escapes"
		switch {
		case n == len(r.seeds):
			x.caught++
			mark = "caught"
		case n > 0:
			x.some++
			mark = "seed luck"
		}
		oracle := "-"
		if n > 0 {
			oracle = strings.Join(uniq(r.oracles), ",")
		}
		listed := ""
		if _, ok := escapes[f.key()]; ok {
			listed = " (escapes.txt)"
		}
		lines = append(lines, fmt.Sprintf("  %-44s %d/%d  %-9s %-22s %s%s", f.key(), n, r.judged, mark, oracle, f.what, listed))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\ncatch rate (rejected at every seed %d..%d) of the corpus in %s:\n", corpusSeeds[0], corpusSeeds[len(corpusSeeds)-1], dir)
	fmt.Fprintf(&b, "  %-8s %5s %7s %10s %7s %16s\n", "exercise", "bugs", "caught", "seed luck", "rate", "correct accepted")
	pct := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f %%", 100*float64(a)/float64(b))
	}
	for _, id := range ids {
		x := rows[id]
		fmt.Fprintf(&b, "  %-8s %5d %7d %10d %7s %13d/%d\n", id, x.bugs, x.caught, x.some, pct(x.caught, x.bugs), x.accepted, x.correct)
		total.bugs += x.bugs
		total.caught += x.caught
		total.some += x.some
		total.correct += x.correct
		total.accepted += x.accepted
	}
	fmt.Fprintf(&b, "  %-8s %5d %7d %10d %7s %13d/%d\n", "all", total.bugs, total.caught, total.some, pct(total.caught, total.bugs), total.accepted, total.correct)
	b.WriteString("per bug (seeds rejected, first failing oracles):\n")
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

// TestRegressionScenariosStillCatchTheirBug: each scenario `judge regress`
// kept in an exercise's regressions folder still rejects the corpus file
// it was kept for, alone, at any submission seed (the solution passing it
// is TestExercisesPassTheirCheck's to check).
func TestRegressionScenariosStillCatchTheirBug(t *testing.T) {
	eng := engine(t)
	n := 0
	for _, ex := range catalog(t).Exercises {
		id := strconv.Itoa(ex.Number)
		for _, rt := range ex.Suite.Tests {
			if !rt.Regression {
				continue
			}
			n++
			stem := strings.TrimPrefix(rt.Name, "regression: ")
			var code []byte
			for _, c := range []corpus{blindCorpus, namedCorpus} {
				if b, err := os.ReadFile(filepath.Join(c.dir, id, stem+".go")); err == nil {
					code = b
				}
			}
			if code == nil {
				t.Errorf("%s: %q names no corpus file %s/%s.go", id, rt.Name, id, stem)
				continue
			}
			sc := *rt
			v := eng.Judge(context.Background(), Submission{Exercise: ex, Code: code, FileName: stem + ".go", Mode: verdict.ModeSubmit, Seed: 7, Scenario: []byte(sc.YAML())})
			if v.Outcome != verdict.OutcomeWrongAnswer {
				t.Errorf("%s: %q no longer rejects %s.go: %s", id, rt.Name, stem, v.Summary())
			}
		}
	}
	if n == 0 {
		t.Fatal("no regression scenarios")
	}
}
