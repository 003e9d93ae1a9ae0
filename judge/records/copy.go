package records

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
)

// tables lists every table of the records, parents before children, so
// that rows copied in this order (and by id within a table) always find
// the rows their foreign keys name.
var tables = []struct {
	name     string
	order    string // ORDER BY
	identity bool   // has an id drawn from a sequence on PostgreSQL
}{
	{"instructors", "id", true},
	{"classes", "id", true},
	{"due_dates", "class_id, exercise", false},
	{"learners", "id", true},
	{"sessions", "token_hash", false},
	{"submissions", "id", true}, // a re-judge points at an earlier id
	{"test_results", "submission_id, idx", false},
	{"test_fault_classes", "submission_id, idx, fault_class", false},
	{"drafts", "learner_id, exercise", false},
	{"progress", "learner_id, exercise", false},
	// judge_events and judge_workers are not records: they are
	// in-flight state of the processes judging.
}

// Copy copies every record of src into dst, which must hold none yet: ids,
// times, verdicts and sessions stay as they were, so learners keep their
// cookies and links. It reads src in one snapshot while others may go on
// writing to it, writes dst in one transaction, and returns the rows
// copied per table. It moves an existing SQLite database to PostgreSQL,
// and makes Backup's SQLite copy of a PostgreSQL database.
func Copy(ctx context.Context, dst, src *DB) (map[string]int64, error) {
	if v1, err := src.SchemaVersion(ctx); err != nil {
		return nil, fmt.Errorf("copy records: %w", err)
	} else if v2, err := dst.SchemaVersion(ctx); err != nil || v1 != v2 {
		return nil, fmt.Errorf("copy records: schema versions differ (%d, %d), %v", v1, v2, err)
	}
	var n int
	if err := dst.w.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM learners) + (SELECT count(*) FROM instructors)").Scan(&n); err != nil {
		return nil, fmt.Errorf("copy records: %w", err)
	}
	if n != 0 {
		return nil, fmt.Errorf("copy records: the destination already holds %d learners and instructors; copy into an empty database", n)
	}
	opts := &sql.TxOptions{ReadOnly: true}
	if src.pg {
		opts.Isolation = sql.LevelRepeatableRead
	} else {
		opts = nil // a deferred transaction: WAL keeps its snapshot
	}
	rtx, err := src.r.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("copy records: %w", err)
	}
	defer rtx.Rollback()
	counts := map[string]int64{}
	err = dst.tx(ctx, func(wtx txn) error {
		for _, t := range tables {
			c, err := copyTable(ctx, wtx, txn{rtx, src.pg}, t.name, t.order)
			if err != nil {
				return fmt.Errorf("table %s: %w", t.name, err)
			}
			counts[t.name] = c
			if dst.pg && t.identity {
				// The next id drawn must follow the copied ones.
				if _, err := wtx.ExecContext(ctx, fmt.Sprintf(
					"SELECT setval(pg_get_serial_sequence('%[1]s', 'id'), (SELECT COALESCE(max(id), 0) + 1 FROM %[1]s), false)", t.name)); err != nil {
					return fmt.Errorf("table %s: %w", t.name, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("copy records: %w", err)
	}
	return counts, nil
}

// copyTable copies one table's rows; name and order are constants.
func copyTable(ctx context.Context, dst, src txn, name, order string) (int64, error) {
	rows, err := src.QueryContext(ctx, "SELECT * FROM "+name+" ORDER BY "+order)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	ins := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", name, strings.Join(cols, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			// Text may arrive as bytes; only the verdict is binary.
			if b, ok := v.([]byte); ok && cols[i] != "verdict" {
				vals[i] = string(b)
			}
		}
		if _, err := dst.ExecContext(ctx, ins, vals...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// backupToSQLite writes the PostgreSQL records into a new SQLite file.
func (db *DB) backupToSQLite(ctx context.Context, abs string) error {
	dst, err := openSQLite(abs)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	_, err = Copy(ctx, dst, db)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
			os.Remove(p)
		}
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}
