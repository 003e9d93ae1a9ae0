package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"ctrljudge/judge/records"
	"ctrljudge/judge/records/pgtest"
	"ctrljudge/judge/records/recordstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// TestMigrateToPostgres: judge migrate moves the fixture's records into
// PostgreSQL, where report, backup and instructor work on the URL.
func TestMigrateToPostgres(t *testing.T) {
	f := recordstest.Seed(t)
	url := pgtest.URL(t)
	dir := t.TempDir()
	if code := cmdMigrate([]string{"--from", f.DB.Path(), "--to", url}); code != 0 {
		t.Fatalf("judge migrate: exit %d", code)
	}
	if code := cmdMigrate([]string{"--from", f.DB.Path(), "--to", url}); code == 0 {
		t.Error("a second migrate into the same database succeeded")
	}
	if code := cmdMigrate([]string{"--from", url, "--to", f.DB.Path()}); code != 2 {
		t.Errorf("migrate from PostgreSQL: exit %d, want 2", code)
	}
	csvOf := func(db string) string {
		t.Helper()
		out := filepath.Join(dir, fmt.Sprintf("r%d.csv", len(db)))
		if code := cmdReport([]string{"--db", db, "--class", f.Class.JoinCode, "--format", "csv", "--out", out}); code != 0 {
			t.Fatalf("judge report --db %s: exit %d", records.Redact(db), code)
		}
		b, _ := os.ReadFile(out)
		return string(b)
	}
	if a, b := csvOf(f.DB.Path()), csvOf(url); a != b || a == "" {
		t.Errorf("reports differ:\nSQLite:\n%s\nPostgreSQL:\n%s", a, b)
	}
	back := filepath.Join(dir, "back.db")
	if code := cmdBackup([]string{"--db", url, "--out", back}); code != 0 {
		t.Fatalf("judge backup of PostgreSQL: exit %d", code)
	}
	if a, b := csvOf(f.DB.Path()), csvOf(back); a != b {
		t.Errorf("the backup's report differs:\n%s\n%s", a, b)
	}
	withStdin(t, "a long enough password\n", func() {
		if code := cmdInstructor([]string{"add", "Hopper", "--db", url}); code != 0 {
			t.Errorf("instructor add on PostgreSQL: exit %d", code)
		}
	})
	d, err := records.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.SignInInstructor(context.Background(), "Grace", recordstest.OwnerPassword); err != nil {
		t.Errorf("migrated instructor signs in: %v", err)
	}
	if _, _, err := d.SignInInstructor(context.Background(), "Hopper", "a long enough password"); err != nil {
		t.Errorf("instructor added on PostgreSQL signs in: %v", err)
	}
}
