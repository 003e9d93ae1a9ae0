package records

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// EventsChannel is the PostgreSQL notification channel on which a judge
// worker announces new progress events; the payload is the submission id.
const EventsChannel = "ctrljudge_events"

// JudgeEvent is one step of a judgement that a worker reported: the server
// streams it to the learner.
type JudgeEvent struct {
	ID   int64  // increasing: read on from the last one seen
	Kind string // progress, retrying, final
	Data []byte // JSON
}

// AddJudgeEvent records a step of a submission's judgement and, on
// PostgreSQL, notifies EventsChannel in the same transaction, so that a
// listener never reads before the row is there.
func (db *DB) AddJudgeEvent(ctx context.Context, submissionID int64, kind string, data []byte) error {
	err := db.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO judge_events(submission_id, kind, data, created_at) VALUES (?, ?, ?, ?)",
			submissionID, kind, string(data), db.nowMs()); err != nil {
			return err
		}
		if !db.pg {
			return nil
		}
		_, err := tx.ExecContext(ctx, "SELECT pg_notify(?, ?)", EventsChannel, strconv.FormatInt(submissionID, 10))
		return err
	})
	if err != nil {
		return fmt.Errorf("judge event of submission %d: %w", submissionID, err)
	}
	return nil
}

// JudgeEvents lists a submission's events after the one with id after.
func (db *DB) JudgeEvents(ctx context.Context, submissionID, after int64) ([]JudgeEvent, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, kind, data FROM judge_events WHERE submission_id = ? AND id > ? ORDER BY id", submissionID, after)
	if err != nil {
		return nil, fmt.Errorf("judge events of submission %d: %w", submissionID, err)
	}
	defer rows.Close()
	var out []JudgeEvent
	for rows.Next() {
		var e JudgeEvent
		var data string
		if err := rows.Scan(&e.ID, &e.Kind, &data); err != nil {
			return nil, fmt.Errorf("judge events of submission %d: %w", submissionID, err)
		}
		e.Data = []byte(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// DeleteJudgeEvents forgets a finished submission's events: its verdict
// is in the record.
func (db *DB) DeleteJudgeEvents(ctx context.Context, submissionID int64) error {
	if _, err := db.w.ExecContext(ctx, "DELETE FROM judge_events WHERE submission_id = ?", submissionID); err != nil {
		return fmt.Errorf("delete judge events of submission %d: %w", submissionID, err)
	}
	return nil
}

// WorkerSeen records that the judge worker id (on host, judging up to
// slots submissions at once) is alive now.
func (db *DB) WorkerSeen(ctx context.Context, id, host string, slots int) error {
	now := db.nowMs()
	_, err := db.w.ExecContext(ctx, `INSERT INTO judge_workers(id, host, slots, started_at, seen_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, id, host, slots, now, now)
	if err != nil {
		return fmt.Errorf("worker heartbeat: %w", err)
	}
	return nil
}

// WorkerGone removes a worker that stopped; a worker that died is only
// not seen any more.
func (db *DB) WorkerGone(ctx context.Context, id string) error {
	if _, err := db.w.ExecContext(ctx, "DELETE FROM judge_workers WHERE id = ?", id); err != nil {
		return fmt.Errorf("worker gone: %w", err)
	}
	return nil
}

// WorkersAlive counts the workers seen within the last within, and their slots.
func (db *DB) WorkersAlive(ctx context.Context, within time.Duration) (workers, slots int, err error) {
	err = db.r.QueryRowContext(ctx, "SELECT count(*), COALESCE(sum(slots), 0) FROM judge_workers WHERE seen_at > ?",
		db.nowMs()-within.Milliseconds()).Scan(&workers, &slots)
	if err != nil {
		return 0, 0, fmt.Errorf("workers alive: %w", err)
	}
	return workers, slots, nil
}
