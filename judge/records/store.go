// Package records keeps ctrljudge's records: learners and their sessions,
// instructors and classes, every submission with its verdict and per-test
// rows, drafts and progress. The records live in an embedded SQLite file
// (the default) or in a PostgreSQL database shared by many processes,
// chosen by what Open is given; the code is one database/sql code for both.
//
// On SQLite one writer connection takes every write in an immediate
// transaction, so writers queue on the busy timeout instead of failing; a
// separate read-only pool serves reads alongside it (WAL mode). On
// PostgreSQL one pool serves both, and the few read-then-write steps lock
// the row they read. The schema lives in numbered migrations embedded in
// the binary, one folder per database with the same numbers and the same
// tables and columns, tracked with PRAGMA user_version on SQLite and a
// schema_version row on PostgreSQL.
package records

import (
	"context"
	"database/sql"
	"database/sql/driver"
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

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "github.com/mattn/go-sqlite3"    // registers the "sqlite3" driver
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
	// pgConns bounds one process's connections to PostgreSQL: a server
	// and each worker hold their own, and the server's limit is shared.
	pgConns = 16
	// migrateLock is the advisory lock that keeps two processes starting
	// at once from migrating the same PostgreSQL database together: the
	// records' migrations take it, and so does anything else that changes
	// the schema at start (WithMigrationLock).
	migrateLock = 7243001
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// DB is an open records database. It is safe for concurrent use.
type DB struct {
	w    pool // the one writer (SQLite); the pool (PostgreSQL)
	r    pool // read-only pool (SQLite); the same pool (PostgreSQL)
	path string
	pg   bool
	now  func() time.Time
}

// IsURL says whether target names a PostgreSQL database
// (postgres://… or postgresql://…) rather than a SQLite file.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open opens the records at target: a PostgreSQL URL (postgres://…), or
// else the path of a SQLite file, created if needed. Embedded migrations
// are applied.
func Open(target string) (*DB, error) {
	if IsURL(target) {
		return openPostgres(target)
	}
	return openSQLite(target)
}

// openPostgres opens a PostgreSQL database through pgx's database/sql
// driver; the database must exist (its owner creates it).
func openPostgres(target string) (*DB, error) {
	shown := Redact(target)
	p, err := sql.Open("pgx", target)
	if err != nil {
		return nil, fmt.Errorf("open records %s: %w", shown, err)
	}
	p.SetMaxOpenConns(pgConns)
	p.SetMaxIdleConns(pgConns)
	p.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.PingContext(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("open records %s: %w", shown, err)
	}
	pl := pool{p, true}
	db := &DB{w: pl, r: pl, path: target, pg: true, now: time.Now}
	if err := db.migrate(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("open records %s: %w", shown, err)
	}
	if err := db.PruneSessions(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("open records %s: %w", shown, err)
	}
	return db, nil
}

// Redact hides the password in a database URL, for messages and logs.
func Redact(target string) string {
	u, err := url.Parse(target)
	if err != nil || !IsURL(target) {
		return target
	}
	return u.Redacted()
}

// openSQLite opens (creating if needed) the SQLite database at path: WAL,
// busy timeout, foreign keys, one writer connection plus a read pool.
func openSQLite(path string) (*DB, error) {
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
	db := &DB{w: pool{w, false}, path: abs, now: time.Now}
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
	db.r = pool{r, false}
	// Expired sessions are only clutter; clear them at each start.
	if err := db.PruneSessions(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open records %s: %w", path, err)
	}
	return db, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.pg {
		return db.w.Close()
	}
	return errors.Join(db.r.Close(), db.w.Close())
}

// Path is the SQLite file's absolute path, or the PostgreSQL URL as given
// (Redact it before showing it).
func (db *DB) Path() string { return db.path }

// Postgres says the records are in PostgreSQL.
func (db *DB) Postgres() bool { return db.pg }

// SQL is the database's pool, for a job queue that keeps its tables
// beside the records (the writer, on SQLite).
func (db *DB) SQL() *sql.DB { return db.w.DB }

// SetClock replaces the clock, for tests that need fixed timestamps.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

func (db *DB) nowMs() int64 { return db.now().UnixMilli() }

// Backup writes a consistent copy of the database to dst, a file that must
// not exist yet, while others keep reading and writing. The copy is a
// SQLite file on both databases: from PostgreSQL, Copy fills it in one
// repeatable-read snapshot.
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
	if db.pg {
		return db.backupToSQLite(ctx, abs)
	}
	// VACUUM INTO takes a read transaction only, so it runs on the read pool.
	if _, err := db.r.ExecContext(ctx, "VACUUM INTO ?", abs); err != nil {
		return fmt.Errorf("backup to %s: %w", dst, err)
	}
	return nil
}

// SchemaVersion is the number of the last migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	return schemaVersion(ctx, db.w, db.pg)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, s string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q queryRower, pg bool) (int, error) {
	var v int
	if !pg {
		err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
		return v, err
	}
	err := q.QueryRowContext(ctx, "SELECT COALESCE(max(version), 0) FROM schema_version").Scan(&v)
	return v, err
}

// dialect names the database's migrations folder.
func (db *DB) dialect() string {
	if db.pg {
		return "postgres"
	}
	return "sqlite"
}

type migration struct {
	n    int
	name string
}

// migrate applies, in order, each embedded migration numbered above the
// database's user_version, each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	dir := "migrations/" + db.dialect()
	entries, err := fs.ReadDir(migrations, dir)
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
	if db.pg {
		// Processes starting together take turns; the table may be new.
		return db.tx(ctx, func(tx txn) error {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrateLock)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)"); err != nil {
				return err
			}
			cur, err := schemaVersion(ctx, tx, true)
			if err != nil {
				return fmt.Errorf("read schema version: %w", err)
			}
			if cur > len(ms) {
				return newerSchema(cur, len(ms))
			}
			for _, m := range ms[cur:] {
				if err := db.applyMigration(ctx, tx, dir, m); err != nil {
					return err
				}
			}
			return nil
		})
	}
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if cur > len(ms) {
		return newerSchema(cur, len(ms))
	}
	for _, m := range ms[cur:] {
		if err := db.tx(ctx, func(tx txn) error { return db.applyMigration(ctx, tx, dir, m) }); err != nil {
			return err
		}
	}
	return nil
}

// WithMigrationLock runs fn holding the lock the records' migrations take,
// so that schema changes made beside the records (River's tables) by
// processes starting together run one process at a time. On SQLite it
// just runs fn: one file has one server.
//
// The lock is held by a session of its own, not in a transaction: fn's
// migrations run in transactions of their own on other connections.
func (db *DB) WithMigrationLock(ctx context.Context, fn func(context.Context) error) (err error) {
	if !db.pg {
		return fn(ctx)
	}
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrateLock); err != nil {
		conn.Close()
		return fmt.Errorf("migration lock: %w", err)
	}
	defer func() {
		// Unlocked even when ctx has ended. A session lock outlives
		// everything but its connection: one not known to be unlocked is
		// discarded, never handed back to the pool still holding it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var unlocked bool
		if uerr := conn.QueryRowContext(uctx, "SELECT pg_advisory_unlock($1)", migrateLock).Scan(&unlocked); uerr != nil || !unlocked {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	return fn(ctx)
}

func newerSchema(cur, have int) error {
	return fmt.Errorf("database schema version %d is newer than this program's %d; use a newer judge", cur, have)
}

// applyMigration applies one migration in tx and records its number.
func (db *DB) applyMigration(ctx context.Context, tx txn, dir string, m migration) error {
	b, err := migrations.ReadFile(dir + "/" + m.name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(b)); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	bump := fmt.Sprintf("PRAGMA user_version = %d", m.n)
	if db.pg {
		bump = fmt.Sprintf("INSERT INTO schema_version(version) VALUES (%d)", m.n)
	}
	if _, err := tx.ExecContext(ctx, bump); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	return nil
}

// tx runs fn in a write transaction (immediate, from the DSN, on SQLite;
// read committed on PostgreSQL).
func (db *DB) tx(ctx context.Context, fn func(txn) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(txn{tx, db.pg}); err != nil {
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
