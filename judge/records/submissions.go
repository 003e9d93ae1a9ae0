package records

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"ctrljudge/judge/verdict"
)

// maxCodeSize backs up the web server's own body limit: the store refuses
// rather than truncates.
const maxCodeSize = 1 << 20 // bytes

// noLimit stands for "no LIMIT": PostgreSQL takes no LIMIT -1.
const noLimit = 1 << 62

// forUpdate locks the rows a read-then-write step reads, on PostgreSQL;
// SQLite's immediate transactions already hold the only write lock.
func (db *DB) forUpdate() string {
	if db.pg {
		return " FOR UPDATE"
	}
	return ""
}

// Submission states.
const (
	StateQueued    = "queued"
	StateRunning   = "running"
	StateDone      = "done"
	StateNotJudged = "not_judged"
)

// Submission is one piece of code sent for judging, and what became of it.
type Submission struct {
	ID                              int64
	LearnerID                       int64
	ClassID                         int64  // the learner's class, 0 outside a class
	Exercise                        string // slug
	ExerciseVersion                 string
	Engine                          string
	Mode                            verdict.Mode
	Code                            string
	CodeHash                        string // hex SHA-256 of Code
	Seed                            uint64
	State                           string          // one of the State constants
	Outcome                         verdict.Outcome // once done; "" before; when not judged, the reason is in Note
	Note                            string
	Passed, Total                   int
	DurationMs                      int64
	QueuedAt, StartedAt, FinishedAt time.Time // zero when not reached
	Verdict                         []byte    // the verdict.Verdict JSON, once done
	// RejudgeOf is the learner's original submission when an instructor
	// re-judged it; 0 for the learner's own.
	RejudgeOf int64
}

// Charged says whether the submission counts as a learner's attempt: it
// was judged, by the learner's own action, and the judge did not fail.
func (s *Submission) Charged() bool {
	return s.State == StateDone && s.RejudgeOf == 0 && s.Outcome != verdict.OutcomeInternalError
}

// Done says the submission has a verdict.
func (s *Submission) Done() bool { return s.State == StateDone }

// NotJudged says the submission will never have a verdict; Note says why.
func (s *Submission) NotJudged() bool { return s.State == StateNotJudged }

// Title says in words where the submission stands: its outcome once
// done, "Not judged" when it never will be, else its state.
func (s *Submission) Title() string {
	switch s.State {
	case StateDone:
		return s.Outcome.Title()
	case StateNotJudged:
		return verdict.OutcomeNotJudged.Title()
	}
	return s.State
}

// CodeHash returns the hex SHA-256 of code.
func CodeHash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// CreateSubmission records a new queued submission; it sets ID, ClassID
// (from the learner), CodeHash, State and QueuedAt.
func (db *DB) CreateSubmission(ctx context.Context, s *Submission) error {
	if s.Mode != verdict.ModeRun && s.Mode != verdict.ModeSubmit {
		return fmt.Errorf("create submission: mode %q is neither run nor submit", s.Mode)
	}
	if s.Exercise == "" {
		return errors.New("create submission: no exercise")
	}
	if len(s.Code) > maxCodeSize {
		return fmt.Errorf("create submission: code is %d bytes, over the %d-byte limit", len(s.Code), maxCodeSize)
	}
	now := db.nowMs()
	err := db.tx(ctx, func(tx txn) error {
		var classID sql.NullInt64
		err := tx.QueryRowContext(ctx, "SELECT class_id FROM learners WHERE id = ?", s.LearnerID).Scan(&classID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("learner %d: %w", s.LearnerID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		var rejudgeOf any
		if s.RejudgeOf != 0 {
			rejudgeOf = s.RejudgeOf
		}
		var id int64
		err = tx.QueryRowContext(ctx, `INSERT INTO submissions
			(learner_id, class_id, exercise, exercise_version, engine, mode, code, code_hash, seed, state, queued_at, rejudge_of)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id`,
			s.LearnerID, classID, s.Exercise, s.ExerciseVersion, s.Engine, string(s.Mode), s.Code, CodeHash(s.Code),
			int64(s.Seed), now, rejudgeOf).Scan(&id)
		if err != nil {
			return err
		}
		s.ID, s.ClassID = id, classID.Int64
		return nil
	})
	if err != nil {
		return fmt.Errorf("create submission: %w", err)
	}
	s.CodeHash, s.State, s.QueuedAt = CodeHash(s.Code), StateQueued, msTime(now)
	s.Outcome, s.Note, s.StartedAt, s.FinishedAt, s.Verdict = "", "", time.Time{}, time.Time{}, nil
	return nil
}

// StartSubmission marks a queued submission running.
func (db *DB) StartSubmission(ctx context.Context, id int64) error {
	res, err := db.w.ExecContext(ctx, "UPDATE submissions SET state = 'running', started_at = ? WHERE id = ? AND state = 'queued'", db.nowMs(), id)
	if err != nil {
		return fmt.Errorf("start submission %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return db.stateError(ctx, "start", id)
	}
	return nil
}

// stateError explains why a state change touched no row.
func (db *DB) stateError(ctx context.Context, op string, id int64) error {
	var state string
	err := db.w.QueryRowContext(ctx, "SELECT state FROM submissions WHERE id = ?", id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s submission %d: %w", op, id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s submission %d: %w", op, id, err)
	}
	return fmt.Errorf("%s submission %d: it is %s: %w", op, id, state, ErrState)
}

// FinishSubmission records the verdict of a queued or running submission:
// the whole verdict JSON, one row per test, and the learner's progress
// (tried, or solved for an accepted submit; never downgraded). An
// internal_error verdict is kept but charges nothing.
func (db *DB) FinishSubmission(ctx context.Context, id int64, v *verdict.Verdict, durationMs int64) error {
	if v == nil {
		return fmt.Errorf("finish submission %d: no verdict", id)
	}
	vj, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("finish submission %d: %w", id, err)
	}
	now := db.nowMs()
	err = db.tx(ctx, func(tx txn) error {
		var learnerID int64
		var exercise, state string
		var mode verdict.Mode
		// On PostgreSQL two finishers of one submission must not both see
		// it unfinished: the row stays locked until the commit.
		err := tx.QueryRowContext(ctx, "SELECT learner_id, exercise, mode, state FROM submissions WHERE id = ?"+db.forUpdate(), id).
			Scan(&learnerID, &exercise, &mode, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if state != StateQueued && state != StateRunning {
			return fmt.Errorf("it is %s: %w", state, ErrState)
		}
		// The verdict names the version and engine that produced it; keep those.
		_, err = tx.ExecContext(ctx, `UPDATE submissions SET state = 'done', outcome = ?, note = ?, passed = ?, total = ?,
			duration_ms = ?, finished_at = ?, verdict = ?,
			exercise_version = CASE WHEN ? <> '' THEN ? ELSE exercise_version END,
			engine = CASE WHEN ? <> '' THEN ? ELSE engine END,
			seed = CASE WHEN ? <> 0 THEN ? ELSE seed END,
			started_at = CASE WHEN started_at = 0 THEN ? ELSE started_at END
			WHERE id = ?`,
			string(v.Outcome), v.Message, v.Passed, v.Passed+v.Failed, durationMs, now, vj,
			v.ExerciseVersion, v.ExerciseVersion, v.Engine, v.Engine, int64(v.Seed), int64(v.Seed), now, id)
		if err != nil {
			return err
		}
		for i, t := range v.Tests {
			if _, err := tx.ExecContext(ctx, "INSERT INTO test_results(submission_id, idx, name, status, sample, oracle) VALUES (?, ?, ?, ?, ?, ?)",
				id, i, t.Name, string(t.Status), boolInt(t.Sample), string(t.Oracle)); err != nil {
				return err
			}
			for _, fc := range t.FaultClasses {
				if _, err := tx.ExecContext(ctx, "INSERT INTO test_fault_classes(submission_id, idx, fault_class) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
					id, i, string(fc)); err != nil {
					return err
				}
			}
		}
		if v.Outcome == verdict.OutcomeInternalError {
			return nil
		}
		p := "tried"
		if mode == verdict.ModeSubmit && v.Outcome == verdict.OutcomeAccepted {
			p = "solved"
		}
		return upsertProgress(ctx, tx, learnerID, exercise, p, now)
	})
	if err != nil {
		return fmt.Errorf("finish submission %d: %w", id, err)
	}
	return nil
}

// AbandonSubmission marks a queued or running submission not judged, with
// the reason in note; it charges the learner nothing.
func (db *DB) AbandonSubmission(ctx context.Context, id int64, note string) error {
	res, err := db.w.ExecContext(ctx, "UPDATE submissions SET state = 'not_judged', note = ?, finished_at = ? WHERE id = ? AND state IN ('queued', 'running')",
		note, db.nowMs(), id)
	if err != nil {
		return fmt.Errorf("abandon submission %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return db.stateError(ctx, "abandon", id)
	}
	return nil
}

const submissionCols = `id, learner_id, COALESCE(class_id, 0), exercise, exercise_version, engine, mode, code, code_hash, seed,
	state, outcome, note, passed, total, duration_ms, queued_at, started_at, finished_at, verdict, COALESCE(rejudge_of, 0)`

type scanner interface{ Scan(...any) error }

func scanSubmission(r scanner) (*Submission, error) {
	s := &Submission{}
	var seed, q, st, fin int64
	err := r.Scan(&s.ID, &s.LearnerID, &s.ClassID, &s.Exercise, &s.ExerciseVersion, &s.Engine, &s.Mode, &s.Code, &s.CodeHash, &seed,
		&s.State, &s.Outcome, &s.Note, &s.Passed, &s.Total, &s.DurationMs, &q, &st, &fin, &s.Verdict, &s.RejudgeOf)
	if err != nil {
		return nil, err
	}
	s.Seed = uint64(seed)
	s.QueuedAt, s.StartedAt, s.FinishedAt = msTime(q), msTime(st), msTime(fin)
	return s, nil
}

func (db *DB) querySubmissions(ctx context.Context, what, where string, args ...any) ([]*Submission, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+submissionCols+" FROM submissions WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []*Submission
	for rows.Next() {
		s, err := scanSubmission(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Submission returns the submission with the given id.
func (db *DB) Submission(ctx context.Context, id int64) (*Submission, error) {
	s, err := scanSubmission(db.r.QueryRowContext(ctx, "SELECT "+submissionCols+" FROM submissions WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("submission %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("submission %d: %w", id, err)
	}
	return s, nil
}

// Submissions lists a learner's submissions of an exercise, newest first;
// exercise "" means every exercise, limit <= 0 means no limit.
func (db *DB) Submissions(ctx context.Context, learnerID int64, exercise string, limit int) ([]*Submission, error) {
	if limit <= 0 {
		limit = noLimit
	}
	return db.querySubmissions(ctx, fmt.Sprintf("submissions of learner %d", learnerID),
		"learner_id = ? AND (? = '' OR exercise = ?) ORDER BY id DESC LIMIT ?", learnerID, exercise, exercise, limit)
}

// Unfinished lists queued and running submissions, oldest first: after a
// restart, each is either judged again or abandoned.
func (db *DB) Unfinished(ctx context.Context) ([]*Submission, error) {
	return db.querySubmissions(ctx, "unfinished submissions", "state IN ('queued', 'running') ORDER BY id")
}

// ClassSubmissions lists every submission by a class's learners, oldest first.
func (db *DB) ClassSubmissions(ctx context.Context, classID int64) ([]*Submission, error) {
	return db.querySubmissions(ctx, fmt.Sprintf("submissions of class %d", classID), "class_id = ? ORDER BY id", classID)
}

// TestRow is one stored test result.
type TestRow struct {
	SubmissionID int64
	Index        int
	Name         string
	Status       verdict.Status
	Sample       bool
	Oracle       verdict.Oracle
	FaultClasses []verdict.Fault // sorted
}

// ClassTestRows lists the test rows of every done submission by a class's
// learners, by submission then test order.
func (db *DB) ClassTestRows(ctx context.Context, classID int64) ([]*TestRow, error) {
	// The fault classes of a test, sorted, joined by the unit separator.
	faults := `(SELECT group_concat(fault_class, char(31)) FROM
		(SELECT fault_class FROM test_fault_classes f WHERE f.submission_id = t.submission_id AND f.idx = t.idx ORDER BY fault_class))`
	if db.pg {
		faults = `(SELECT string_agg(fault_class, chr(31) ORDER BY fault_class) FROM test_fault_classes f
			WHERE f.submission_id = t.submission_id AND f.idx = t.idx)`
	}
	rows, err := db.r.QueryContext(ctx, `SELECT t.submission_id, t.idx, t.name, t.status, t.sample, t.oracle,
			COALESCE(`+faults+`, '')
		FROM test_results t JOIN submissions s ON s.id = t.submission_id
		WHERE s.class_id = ? ORDER BY t.submission_id, t.idx`, classID)
	if err != nil {
		return nil, fmt.Errorf("test rows of class %d: %w", classID, err)
	}
	defer rows.Close()
	var out []*TestRow
	for rows.Next() {
		t := &TestRow{}
		var fcs string
		var sample int
		if err := rows.Scan(&t.SubmissionID, &t.Index, &t.Name, &t.Status, &sample, &t.Oracle, &fcs); err != nil {
			return nil, fmt.Errorf("test rows of class %d: %w", classID, err)
		}
		t.Sample = sample != 0
		if fcs != "" {
			for _, fc := range strings.Split(fcs, "\x1f") {
				t.FaultClasses = append(t.FaultClasses, verdict.Fault(fc))
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("test rows of class %d: %w", classID, err)
	}
	return out, nil
}
