package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ctrljudge/judge/records"
	"ctrljudge/judge/records/recordstest"
)

func TestReportBackupInstructor(t *testing.T) {
	f := recordstest.Seed(t)
	dir := t.TempDir()
	db := f.DB.Path()

	out := filepath.Join(dir, "class.csv")
	if code := cmdReport([]string{"--db", db, "--class", fmt.Sprint(f.Class.ID), "--format", "csv", "--out", out}); code != 0 {
		t.Fatalf("judge report: exit %d", code)
	}
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil || len(recs) != 7 {
		t.Errorf("report CSV: %d rows, %v; want a header and 6 learners", len(recs), err)
	}
	html := filepath.Join(dir, "class.html")
	if code := cmdReport([]string{"--db", db, "--class", f.Class.JoinCode, "--format", "html", "--out", html}); code != 0 {
		t.Fatalf("judge report html: exit %d", code)
	}
	if b, _ := os.ReadFile(html); !strings.Contains(string(b), "<svg") {
		t.Error("HTML report has no chart")
	}
	if code := cmdReport([]string{"--db", filepath.Join(dir, "missing.db"), "--class", "1"}); code == 0 {
		t.Error("report from a missing database succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("report created a database at a mistyped path")
	}

	copyPath := filepath.Join(dir, "backup.db")
	if code := cmdBackup([]string{"--db", db, "--out", copyPath}); code != 0 {
		t.Fatalf("judge backup: exit %d", code)
	}
	if code := cmdBackup([]string{"--db", db, "--out", copyPath}); code == 0 {
		t.Error("backup overwrote an existing file")
	}
	cp, err := records.Open(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	subs, err := cp.ClassSubmissions(context.Background(), f.Class.ID)
	cp.Close()
	if err != nil || len(subs) == 0 {
		t.Errorf("backup holds %d submissions, %v", len(subs), err)
	}

	fresh := filepath.Join(dir, "fresh.db")
	withStdin(t, "a long enough password\n", func() {
		if code := cmdInstructor([]string{"add", "Hopper", "--db", fresh}); code != 0 {
			t.Errorf("instructor add: exit %d", code)
		}
	})
	withStdin(t, "", func() {
		if code := cmdInstructor([]string{"add", "Nopass", "--db", fresh}); code == 0 {
			t.Error("instructor add without a password succeeded")
		}
	})
	d, err := records.Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.SignInInstructor(context.Background(), "Hopper", "a long enough password"); err != nil {
		t.Errorf("sign in with the piped password: %v", err)
	}
	if ins, _ := d.Instructors(context.Background()); len(ins) != 1 {
		t.Errorf("%d instructors; want only Hopper", len(ins))
	}
}

func withStdin(t *testing.T, input string, fn func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString(input)
	w.Close()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	fn()
}
