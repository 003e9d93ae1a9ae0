package instructor

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/records/recordstest"
	"ctrljudge/judge/verdict"
)

// Two learners, one with a bidi override in the name, hand in the same
// real file (judge/testdata/learner/escapes.txtar, with raw escapes added
// in a comment), judged by the real engine. Every instructor view and
// report shows their names, code and verdict with the control characters
// escaped, none raw.
func TestLearnerTextIsInertForInstructors(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles to WebAssembly; skipped with -short")
	}
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	ctx := context.Background()
	ar, err := txtar.ParseFile("../../judge/testdata/learner/escapes.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var code string
	for _, f := range ar.Files {
		if strings.HasSuffix(f.Name, ".go") {
			code = string(f.Data)
		}
	}
	code += "\n// raw: \x1b]0;pwned\a\x1b[2J\x7f\u009b\n"
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := cat.Find("171")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(t.TempDir(), "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	v := eng.Judge(ctx, judge.Submission{Exercise: ex, Code: []byte(code), FileName: "evil.go", Mode: verdict.ModeSubmit, Seed: 1})
	if v.Outcome != verdict.OutcomeRuntimeError || !strings.Contains(v.FirstFailure().Message, "\x1b[2J") {
		t.Fatalf("outcome %s, message %q: not the verdict this test is about", v.Outcome, v.FirstFailure().Message)
	}
	var subs []*records.Submission
	for _, name := range []string{"Eve\u202eliam", "Mal"} {
		l, _, err := ts.f.DB.SignInLearner(ctx, name, ts.f.Class.JoinCode)
		if err != nil {
			t.Fatal(err)
		}
		s := &records.Submission{LearnerID: l.ID, Exercise: ex.Slug, Mode: verdict.ModeSubmit, Code: code,
			ExerciseVersion: v.ExerciseVersion, Engine: v.Engine, Seed: 1}
		if err := ts.f.DB.CreateSubmission(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := ts.f.DB.StartSubmission(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if err := ts.f.DB.FinishSubmission(ctx, s.ID, v, 100); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	eve, mal, class := subs[0], subs[1], ts.f.Class.ID
	const evil = `\x1b[2J\x1b[H\x1b[32m0 failed\x1b[0m\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x0d\u0085\u009b31m\x7f\u202eevil\u2066x\u2069`
	const name, comment = `Eve\u202eliam`, `// raw: \x1b]0;pwned\x07\x1b[2J\x7f\u009b`
	for path, wants := range map[string][]string{
		fmt.Sprintf("/classes/%d", class):                                            {name},
		fmt.Sprintf("/classes/%d/learners/%d?show=%d", class, eve.LearnerID, eve.ID): {name, "panicked: boom:" + evil, comment},
		fmt.Sprintf("/classes/%d/similarity", class):                                 {name},
		fmt.Sprintf("/classes/%d/similarity/%d/%d", class, eve.ID, mal.ID):           {name, comment},
		fmt.Sprintf("/classes/%d/report.html", class):                                {name, comment},
		fmt.Sprintf("/classes/%d/report.csv", class):                                 {name},
	} {
		rec := ts.do(http.MethodGet, prefix+path, owner, nil)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", path, rec.Code)
			continue
		}
		if inert := verdict.Inert(body); inert != body {
			i := 0
			for i < len(body) && body[i] == inert[i] {
				i++
			}
			t.Errorf("GET %s: a raw control character at byte %d: %s", path, i, inert[max(0, i-60):i+20])
		}
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q", path, want)
			}
		}
	}
	// The CSV is still a table, the JSON still the data, C0 controls
	// escaped by encoding/json.
	rec := ts.do(http.MethodGet, prefix+fmt.Sprintf("/classes/%d/report.csv", class), owner, nil)
	if _, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll(); err != nil {
		t.Errorf("report.csv: %v", err)
	}
	rec = ts.do(http.MethodGet, prefix+fmt.Sprintf("/classes/%d/report.json", class), owner, nil)
	var data struct{ Learners []struct{ Name string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &data); err != nil || strings.ContainsFunc(rec.Body.String(), func(r rune) bool { return r < 0x20 && r != '\n' }) {
		t.Errorf("report.json: %v", err)
	}
}
