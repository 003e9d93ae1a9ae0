package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// JoinClass signs a learner into the class with joinCode under a display
// name, as SignInLearner does, and in the same transaction hands over what
// the browser's anonymous learner (anonID; 0 for none) practised: see
// mergeAnonymous. Only an anonymous learner (no name, no class) is merged:
// a named learner signing in again from another browser, or from a
// session of another class, keeps each history where it is.
func (db *DB) JoinClass(ctx context.Context, name, joinCode string, anonID int64) (l *Learner, token string, merged bool, err error) {
	name, err = CleanName(name)
	if err != nil {
		return nil, "", false, err
	}
	code := NormalizeJoinCode(joinCode)
	if code == "" {
		return nil, "", false, ErrBadJoinCode
	}
	now := db.nowMs()
	// Two first sign-ins under one new name at once: on PostgreSQL the
	// loser meets the unique index and signs in again, finding the winner.
	join := func(tx txn) error {
		var e error
		if l, e = signIn(ctx, tx, name, code, now); e != nil {
			return e
		}
		if merged, e = mergeAnonymous(ctx, tx, anonID, l); e != nil {
			return e
		}
		token, e = insertSession(ctx, tx, "learner_id", l.ID, now, learnerSessionTTL)
		return e
	}
	err = db.tx(ctx, join)
	if isUnique(err) {
		err = db.tx(ctx, join)
	}
	if errors.Is(err, ErrBadJoinCode) {
		return nil, "", false, ErrBadJoinCode
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("join class: %w", err)
	}
	return l, token, merged, nil
}

// signIn finds or creates the named learner of the class with the
// (normalized) join code.
func signIn(ctx context.Context, tx txn, name, code string, now int64) (*Learner, error) {
	var classID int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM classes WHERE join_code = ?", code).Scan(&classID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrBadJoinCode
	}
	if err != nil {
		return nil, err
	}
	l := &Learner{Name: name, ClassID: classID}
	var created int64
	err = tx.QueryRowContext(ctx, "SELECT id, created_at FROM learners WHERE class_id = ? AND name = ?", classID, name).Scan(&l.ID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		created = now
		err := tx.QueryRowContext(ctx, "INSERT INTO learners(name, class_id, created_at) VALUES (?, ?, ?) RETURNING id", name, classID, now).Scan(&l.ID)
		if err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	l.CreatedAt = msTime(created)
	return l, nil
}

// mergeAnonymous moves everything of the anonymous learner anonID into
// the learner into, then deletes the anonymous learner (and so its
// sessions). Submissions keep their times, code and verdicts and join
// into's class, so the class sees the attempts, each when it was made;
// re-judges follow the submissions they point at. Drafts: the newer of the
// two per exercise. Progress: solved wins over tried, and the first solve
// is kept. It does nothing, and says so, when anonID is 0, is into itself,
// or is not anonymous (has a name or a class).
func mergeAnonymous(ctx context.Context, tx txn, anonID int64, into *Learner) (bool, error) {
	if anonID == 0 || anonID == into.ID {
		return false, nil
	}
	var name string
	var classID sql.NullInt64
	err := tx.QueryRowContext(ctx, "SELECT name, class_id FROM learners WHERE id = ?", anonID).Scan(&name, &classID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if name != "" || classID.Valid {
		return false, nil
	}
	var class any
	if into.ClassID != 0 {
		class = into.ClassID
	}
	steps := []struct {
		sql  string
		args []any
	}{
		{"UPDATE submissions SET learner_id = ?, class_id = ? WHERE learner_id = ?", []any{into.ID, class, anonID}},
		// "WHERE true" keeps SQLite from reading ON CONFLICT as a join.
		{`INSERT INTO drafts(learner_id, exercise, code, updated_at)
			SELECT CAST(? AS BIGINT), exercise, code, updated_at FROM drafts WHERE learner_id = ? AND true
			ON CONFLICT (learner_id, exercise) DO UPDATE SET code = excluded.code, updated_at = excluded.updated_at
			WHERE excluded.updated_at > drafts.updated_at`, []any{into.ID, anonID}},
		{`INSERT INTO progress(learner_id, exercise, state, updated_at)
			SELECT CAST(? AS BIGINT), exercise, state, updated_at FROM progress WHERE learner_id = ? AND true
			ON CONFLICT (learner_id, exercise) DO UPDATE SET
				updated_at = CASE
					WHEN progress.state = 'solved' AND excluded.state = 'solved' THEN (CASE WHEN progress.updated_at < excluded.updated_at THEN progress.updated_at ELSE excluded.updated_at END)
					WHEN progress.state = 'solved' THEN progress.updated_at
					WHEN excluded.state = 'solved' THEN excluded.updated_at
					WHEN progress.updated_at > excluded.updated_at THEN progress.updated_at
					ELSE excluded.updated_at END,
				state = CASE WHEN progress.state = 'solved' OR excluded.state = 'solved' THEN 'solved' ELSE 'tried' END`,
			[]any{into.ID, anonID}},
		{"DELETE FROM learners WHERE id = ?", []any{anonID}},
	}
	for _, s := range steps {
		if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
			return false, fmt.Errorf("merge learner %d into %d: %w", anonID, into.ID, err)
		}
	}
	return true, nil
}
