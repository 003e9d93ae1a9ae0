package records

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// The store's SQL is written once, in the subset SQLite and PostgreSQL
// share, with SQLite's placeholders (? and ?N); pool and txn rewrite them
// to PostgreSQL's $N on the way out. The few places where the two differ
// ask db.pg.

// rebind turns ? and ?N placeholders into $N, leaving quoted text alone.
func rebind(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + q[i+1:j])
				i = j - 1
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pool is a connection pool that speaks the store's SQL.
type pool struct {
	*sql.DB
	pg bool
}

func (p pool) q(s string) string {
	if p.pg {
		return rebind(s)
	}
	return s
}

func (p pool) ExecContext(ctx context.Context, s string, args ...any) (sql.Result, error) {
	return p.DB.ExecContext(ctx, p.q(s), args...)
}

func (p pool) QueryContext(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	return p.DB.QueryContext(ctx, p.q(s), args...)
}

func (p pool) QueryRowContext(ctx context.Context, s string, args ...any) *sql.Row {
	return p.DB.QueryRowContext(ctx, p.q(s), args...)
}

func (p pool) Exec(s string, args ...any) (sql.Result, error) {
	return p.ExecContext(context.Background(), s, args...)
}

func (p pool) QueryRow(s string, args ...any) *sql.Row {
	return p.QueryRowContext(context.Background(), s, args...)
}

// txn is a write transaction that speaks the store's SQL.
type txn struct {
	*sql.Tx
	pg bool
}

func (t txn) q(s string) string {
	if t.pg {
		return rebind(s)
	}
	return s
}

func (t txn) ExecContext(ctx context.Context, s string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.q(s), args...)
}

func (t txn) QueryContext(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.q(s), args...)
}

func (t txn) QueryRowContext(ctx context.Context, s string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.q(s), args...)
}

// isUnique says err is a violated UNIQUE constraint or primary key.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	return false
}

// boolInt stores a flag as 0 or 1: the schema keeps flags INTEGER on both
// databases, so that copying rows between them needs no conversion.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
