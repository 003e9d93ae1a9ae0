package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SaveDraft keeps the learner's latest unsent code for an exercise.
func (db *DB) SaveDraft(ctx context.Context, learnerID int64, exercise, code string) error {
	if len(code) > maxCodeSize {
		return fmt.Errorf("save draft: code is %d bytes, over the %d-byte limit", len(code), maxCodeSize)
	}
	_, err := db.w.ExecContext(ctx, `INSERT INTO drafts(learner_id, exercise, code, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (learner_id, exercise) DO UPDATE SET code = excluded.code, updated_at = excluded.updated_at`,
		learnerID, exercise, code, db.nowMs())
	if err != nil {
		return fmt.Errorf("save draft: %w", err)
	}
	return nil
}

// Draft returns the learner's saved draft; ok is false when there is none.
func (db *DB) Draft(ctx context.Context, learnerID int64, exercise string) (code string, ok bool, err error) {
	err = db.r.QueryRowContext(ctx, "SELECT code FROM drafts WHERE learner_id = ? AND exercise = ?", learnerID, exercise).Scan(&code)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("draft: %w", err)
	}
	return code, true, nil
}

// Progress maps each exercise the learner has tried to "tried" or "solved".
func (db *DB) Progress(ctx context.Context, learnerID int64) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT exercise, state FROM progress WHERE learner_id = ?", learnerID)
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	defer rows.Close()
	p := map[string]string{}
	for rows.Next() {
		var ex, st string
		if err := rows.Scan(&ex, &st); err != nil {
			return nil, fmt.Errorf("progress: %w", err)
		}
		p[ex] = st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	return p, nil
}

// upsertProgress records tried or solved; solved is never taken back.
func upsertProgress(ctx context.Context, tx txn, learnerID int64, exercise, state string, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO progress(learner_id, exercise, state, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (learner_id, exercise) DO UPDATE SET
			state = CASE WHEN progress.state = 'solved' THEN 'solved' ELSE excluded.state END,
			updated_at = CASE WHEN progress.state = 'solved' THEN progress.updated_at ELSE excluded.updated_at END`,
		learnerID, exercise, state, now)
	return err
}
