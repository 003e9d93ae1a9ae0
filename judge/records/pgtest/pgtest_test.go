package pgtest

import (
	"database/sql"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestServer: two databases on one server are separate, and a query runs.
func TestServer(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	db, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var who string
	if err := db.QueryRow("SELECT current_user").Scan(&who); err != nil || who != "postgres" {
		t.Errorf("current_user = %q, %v", who, err)
	}
}
