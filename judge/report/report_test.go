package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/records/recordstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func fixtureReport(t *testing.T) (*Report, *recordstest.Fixture) {
	t.Helper()
	f := recordstest.Seed(t)
	in, err := Load(context.Background(), f.DB, f.Class.ID, []Exercise{{Slug: recordstest.ExerciseSlug, Number: recordstest.ExerciseNumber,
		Title: recordstest.ExerciseTitle, Version: recordstest.ExerciseVersion, Starter: []byte(recordstest.Starter),
		Solution: []byte(recordstest.Solution)}})
	if err != nil {
		t.Fatal(err)
	}
	// The join code is random: pin it so golden files are stable.
	in.Class.JoinCode = "TESTCODE"
	return Compute(in, Options{Now: f.Start.Add(72 * time.Hour)}), f
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; diff:\n%s", name, diffText(string(want), string(got)))
	}
}

func diffText(a, b string) string {
	var sb strings.Builder
	for _, l := range Diff(a, b) {
		if l.Op != ' ' {
			sb.WriteString(string(l.Op) + l.Text + "\n")
		}
	}
	return sb.String()
}

func TestGoldenCSV(t *testing.T) {
	r, _ := fixtureReport(t)
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "class.csv", buf.Bytes())
}

func TestGoldenJSON(t *testing.T) {
	r, _ := fixtureReport(t)
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "class.json", buf.Bytes())
}

// TestReportFacts checks the figures the golden files hold, so a wrong
// golden file cannot hide a wrong report.
func TestReportFacts(t *testing.T) {
	r, f := fixtureReport(t)
	rows := map[string]*LearnerRow{}
	for _, l := range r.Learners {
		rows[l.Name] = l
	}
	if _, ok := rows["Eve"]; ok || len(r.Learners) != 6 {
		t.Errorf("%d learners (Eve from another class included: %v); want the class's 6", len(r.Learners), ok)
	}
	if r.Exercises[0].Slug != "reconcile-loop" || r.Exercises[1].Slug != "owner-refs" {
		t.Fatalf("exercises %v", r.Exercises)
	}
	cell := func(name string, i int) *Cell { return rows[name].Cells[i] }
	ada := cell("Ada", 0)
	if ada.Status != StatusSolved || ada.Attempts != 1 || ada.Runs != 1 || ada.Best.Outcome != "accepted" ||
		ada.Latest.Outcome != "wrong_answer" || !ada.Latest.Rejudge || ada.Latest.ExerciseVersion != "v2" || ada.Best.ExerciseVersion != "v1" {
		t.Errorf("Ada: %+v best %+v latest %+v", ada, ada.Best, ada.Latest)
	}
	ben := cell("Ben", 0)
	if ben.Status != StatusSolvedLate || !ben.Late || ben.Attempts != 3 {
		t.Errorf("Ben: %+v", ben)
	}
	cleo := cell("Cleo", 0)
	if cleo.Status != StatusAttempted || cleo.Attempts != 2 || cleo.Best.Passed != 3 {
		t.Errorf("Cleo (internal error not charged): %+v best %+v", cleo, cleo.Best)
	}
	dev := rows["Dev"]
	if dev.Cells[0].NotJudged != 1 || dev.Cells[0].Attempts != 0 || dev.Cells[1].Status != StatusSolved || dev.Cells[1].Late {
		t.Errorf("Dev: %+v %+v", dev.Cells[0], dev.Cells[1])
	}
	if adaOR := cell("Ada", 1); adaOR.Status != StatusNotStarted {
		t.Errorf("Ada's running submission counted: %+v", adaOR)
	}

	a := r.Analytics[0]
	// Attempted: Ada, Ben, Cleo, formula learner; solved: Ada, Ben.
	if a.Attempted != 4 || a.Solved != 2 || a.PassRate != 0.5 || a.FirstTryPassRate != 0.25 {
		t.Errorf("analytics: attempted %d solved %d pass %v first-try %v", a.Attempted, a.Solved, a.PassRate, a.FirstTryPassRate)
	}
	// Ben and Cleo failed the restart-after-write test: 2 of 4 learners.
	if c := a.FailingTests[0]; c.Name != "restart-after-write" || c.Learners != 2 || c.Share != 0.5 || c.Submissions != 3 {
		t.Errorf("top failing test %+v", c)
	}
	if c := a.FailingFaultClasses[0]; c.Name != "crash-after-write" || c.Learners != 2 {
		t.Errorf("top failing fault class %+v", a.FailingFaultClasses)
	}
	if a.AttemptsToSolve[0].Count != 1 || a.AttemptsToSolve[2].Count != 1 {
		t.Errorf("attempts to solve %+v; want one learner at 1, one at 3", a.AttemptsToSolve)
	}
	if len(r.Similarity.Pairs) == 0 {
		t.Fatal("no similar pair; Ben's renamed copy of Ada's code should be listed")
	}
	p := r.Similarity.Pairs[0]
	if p.A.Name != "Ada" || p.B.Name != "Ben" || p.Score < 0.9 {
		t.Errorf("top pair %+v", p)
	}
	for _, p := range r.Similarity.Pairs {
		names := p.A.Name + "+" + p.B.Name
		if strings.Contains(names, "Cleo") && (strings.Contains(names, "Ada") || strings.Contains(names, "Ben")) {
			t.Errorf("Cleo's different code paired with %s: %+v", names, p)
		}
	}
	// Ada sent the reference solution as it is, Ben a renamed copy; Cleo's
	// own code is not listed.
	ref := map[string]*ReferenceMatch{}
	for _, m := range r.Similarity.Reference {
		ref[m.Name] = m
	}
	if m := ref["Ada"]; m == nil || !m.Identical || m.Score != 1 {
		t.Errorf("Ada's copy of the reference solution: %+v", m)
	}
	if m := ref["Ben"]; m == nil || m.Identical || m.Score < 0.9 {
		t.Errorf("Ben's renamed reference solution: %+v", m)
	}
	if m := ref["Cleo"]; m != nil {
		t.Errorf("Cleo's own code listed as close to the reference: %+v", m)
	}
	if len(r.Similarity.Reference) > 0 && r.Similarity.Reference[0].Name != "Ada" {
		t.Errorf("identical copies come first: %+v", r.Similarity.Reference[0])
	}

	// Outcome shares are of the submits: they add up to 100 %.
	sum, subs := 0.0, 0
	for _, o := range a.Outcomes {
		sum += o.Share
		subs += o.Submissions
	}
	if subs != a.Submissions || sum < 0.99 || sum > 1.01 {
		t.Errorf("outcomes %+v: %d submits of %d, shares add up to %v", a.Outcomes, subs, a.Submissions, sum)
	}
	_ = f
}

// TestScoresRounded: a score is written with at most one decimal.
func TestScoresRounded(t *testing.T) {
	for _, c := range []struct {
		passed, total int
		want          string
	}{{2, 17, "11.8"}, {1, 3, "33.3"}, {3, 4, "75"}, {7, 7, "100"}, {0, 5, "0"}} {
		r := &Report{Exercises: []ExerciseInfo{{Slug: "x"}}, Learners: []*LearnerRow{{ID: 1, Name: "A",
			Cells: []*Cell{{Exercise: "x", Status: StatusAttempted, Best: &Result{Passed: c.passed, Total: c.total}}}}}}
		var buf bytes.Buffer
		if err := r.WriteCSV(&buf); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got := recs[1][5]; got != c.want {
			t.Errorf("%d/%d: CSV score %q; want %q", c.passed, c.total, got, c.want)
		}
	}
}

func TestCSVInjectionNeutralised(t *testing.T) {
	r, _ := fixtureReport(t)
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q starts a formula", cell)
			}
			if cell == `'=HYPERLINK("http://evil")` {
				found = true
			}
		}
	}
	if !found {
		t.Error("the formula-named learner is missing or mangled")
	}
	for _, c := range []struct{ in, want string }{{"=1+1", "'=1+1"}, {"+1", "'+1"}, {"-1", "'-1"}, {"@SUM(A1)", "'@SUM(A1)"}, {"Ada", "Ada"}, {"", ""}} {
		if got := CSVCell(c.in); got != c.want {
			t.Errorf("CSVCell(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestHTMLEscapes: every payload from the fixture appears only escaped.
func TestHTMLEscapes(t *testing.T) {
	r, _ := fixtureReport(t)
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML report holds %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "<svg", "Ops 101"} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	if strings.Contains(out, "src=\"http") || strings.Contains(out, "href=\"http") {
		t.Error("HTML report fetches something: it must be self-contained")
	}
	var jbuf bytes.Buffer
	r.WriteJSON(&jbuf)
	if strings.Contains(jbuf.String(), "<script>") {
		t.Error("JSON export holds a raw <script> (encoding/json should escape it)")
	}
}

func TestDiff(t *testing.T) {
	got := Diff("a\nb\nc\nd\n", "a\nx\nc\nd\ne\n")
	var ops strings.Builder
	for _, l := range got {
		ops.WriteString(string(l.Op) + l.Text + ";")
	}
	if want := " a;-b;+x; c; d;+e;"; ops.String() != want {
		t.Errorf("Diff = %q; want %q", ops.String(), want)
	}
	if d := Diff("", ""); len(d) != 0 {
		t.Errorf("Diff of empty texts = %v", d)
	}
}

func TestHighlightKeepsEveryByte(t *testing.T) {
	for _, src := range []string{recordstest.Starter, "package x\nfunc {\n\"unterminated\n/* open", "", "`raw\nstring`\n// c\n"} {
		var sb strings.Builder
		for i, l := range Highlight(src) {
			if i > 0 {
				sb.WriteString("\n")
			}
			for _, s := range l.Spans {
				sb.WriteString(s.Text)
			}
		}
		if got := sb.String(); got != strings.TrimSuffix(src, "\n") && got != src {
			t.Errorf("Highlight lost text: %q -> %q", src, got)
		}
	}
	l := Highlight("func f() { return \"s\" } // c")
	classes := map[string]bool{}
	for _, s := range l[0].Spans {
		classes[s.Class] = true
	}
	for _, c := range []string{"kw", "str", "com"} {
		if !classes[c] {
			t.Errorf("no %s span in %+v", c, l[0].Spans)
		}
	}
}

func TestFingerprintsIgnoreNamesAndStarter(t *testing.T) {
	a := []byte(recordstest.Starter + "\nfunc helper(a, b int) int {\n\tfor i := 0; i < a; i++ {\n\t\tb += i * 2\n\t}\n\treturn b\n}\n")
	b := []byte(recordstest.Starter + "\n// renamed\nfunc other(x, y int) int {\n\tfor j := 0; j < x; j++ {\n\t\ty += j * 7\n\t}\n\treturn y\n}\n")
	ha, hb := hashSet(Fingerprints(a)), hashSet(Fingerprints(b))
	if len(ha) == 0 || len(ha) != len(hb) {
		t.Fatalf("fingerprints %d and %d; renaming should not change them", len(ha), len(hb))
	}
	for h := range ha {
		if !hb[h] {
			t.Error("renamed code has a different fingerprint")
		}
	}
	la, _ := SharedLines(a, b, []byte(recordstest.Starter))
	if la[1] || la[3] {
		t.Errorf("starter lines marked as shared: %v", la)
	}
	if !la[11] {
		t.Errorf("helper's lines not marked as shared: %v", la)
	}
}
