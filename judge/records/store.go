// Package records keeps ctrljudge's records in SQLite: learners and their
// sessions, instructors and classes, every submission with its verdict and
// per-test rows, drafts and progress.
//
// One writer connection takes every write in an immediate transaction, so
// writers queue on the busy timeout instead of failing; a separate
// read-only pool serves reads alongside it (WAL mode). The schema lives in
// numbered migrations embedded in the binary and tracked with
// PRAGMA user_version.
package records

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

var (
	// ErrNotFound: no such record (or an expired session).
	ErrNotFound = errors.New("not found")
	// ErrBadJoinCode: no class has that join code.
	ErrBadJoinCode = errors.New("no class has that join code")
	// ErrBadName: a display or class name is empty, too long or has control characters.
	ErrBadName = errors.New("a name needs 1 to 64 printable characters")
	// ErrState: the submission is not in a state that allows the change.
	ErrState = errors.New("submission is in the wrong state")
	// ErrBadPassword: wrong instructor name or password.
	ErrBadPassword = errors.New("wrong name or password")
)

const (
	busyTimeoutMs = 10000 // how long a writer waits for the lock
	readConns     = 4
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open records database. It is safe for concurrent use.
type DB struct {
	w    *sql.DB // the one writer
	r    *sql.DB // read-only pool
	path string
	now  func() time.Time
}

// Open opens (creating if needed) the SQLite database at path: WAL, busy
// timeout, foreign keys, one writer connection plus a read pool, embedded
// migrations applied.
func Open(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open records %s: %w", path, err)
	}
	// A file: URI, so a path holding '?' or '#' stays a path.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath()
	w, err := sql.Open("sqlite3", uri+"?_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=on&_txlock=immediate&_busy_timeout="+strconv.Itoa(busyTimeoutMs))
	if err != nil {
		return nil, fmt.Errorf("open records %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	db := &DB{w: w, path: abs, now: time.Now}
	if err := db.migrate(context.Background()); err != nil {
		w.Close()
		return nil, fmt.Errorf("open records %s: %w", path, err)
	}
	r, err := sql.Open("sqlite3", uri+"?mode=ro&_foreign_keys=on&_busy_timeout="+strconv.Itoa(busyTimeoutMs))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open records %s: %w", path, err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	r.SetConnMaxLifetime(0)
	if err := r.Ping(); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open records %s: read pool: %w", path, err)
	}
	db.r = r
	// Expired sessions are only clutter; clear them at each start.
	if err := db.PruneSessions(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open records %s: %w", path, err)
	}
	return db, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.r.Close(), db.w.Close())
}

// Path is the database file's absolute path.
func (db *DB) Path() string { return db.path }

// SetClock replaces the clock, for tests that need fixed timestamps.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

func (db *DB) nowMs() int64 { return db.now().UnixMilli() }

// Backup writes a consistent copy of the database to dst, a file that must
// not exist yet, while others keep reading and writing.
func (db *DB) Backup(ctx context.Context, dst string) error {
	abs, err := filepath.Abs(dst)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("backup: %s already exists; choose a new file", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	// VACUUM INTO takes a read transaction only, so it runs on the read pool.
	if _, err := db.r.ExecContext(ctx, "VACUUM INTO ?", abs); err != nil {
		return fmt.Errorf("backup to %s: %w", dst, err)
	}
	return nil
}

// SchemaVersion is the number of the last migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

type migration struct {
	n    int
	name string
}

// migrate applies, in order, each embedded migration numbered above the
// database's user_version, each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n <= 0 {
			return fmt.Errorf("migration %s: name must start with a number and _", e.Name())
		}
		ms = append(ms, migration{n, e.Name()})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.n - b.n })
	for i, m := range ms {
		if m.n != i+1 {
			return fmt.Errorf("migration %s: numbers must run 1, 2, 3... without gaps", m.name)
		}
	}
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if cur > len(ms) {
		return fmt.Errorf("database schema version %d is newer than this program's %d; use a newer judge", cur, len(ms))
	}
	for _, m := range ms[cur:] {
		b, err := migrations.ReadFile("migrations/" + m.name)
		if err != nil {
			return err
		}
		err = db.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, string(b)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.n))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// tx runs fn in a write transaction (immediate, from the DSN).
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// msTime turns stored milliseconds into a UTC time, 0 into the zero time.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
