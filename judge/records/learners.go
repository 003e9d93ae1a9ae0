package records

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

const (
	learnerSessionTTL    = 60 * 24 * time.Hour
	instructorSessionTTL = 12 * time.Hour
	maxNameLen           = 64 // characters
	tokenBytes           = 32
)

// Learner is a person submitting code: named in a class, or anonymous.
type Learner struct {
	ID        int64
	Name      string // "" for an anonymous learner
	ClassID   int64  // 0 when practising outside a class
	CreatedAt time.Time
}

// CleanName trims a display or class name and checks it: 1 to 64
// characters, none of them control characters.
func CleanName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxNameLen {
		return "", ErrBadName
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", ErrBadName
		}
	}
	return s, nil
}

// newToken returns a random session token and the hash stored for it.
func newToken() (token, hash string) {
	b := make([]byte, tokenBytes)
	rand.Read(b) // never fails (crypto/rand)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewAnonymousLearner creates a learner outside any class and a session for it.
func (db *DB) NewAnonymousLearner(ctx context.Context) (l *Learner, token string, err error) {
	now := db.nowMs()
	l = &Learner{CreatedAt: msTime(now)}
	err = db.tx(ctx, func(tx txn) error {
		err := tx.QueryRowContext(ctx, "INSERT INTO learners(name, class_id, created_at) VALUES ('', NULL, ?) RETURNING id", now).Scan(&l.ID)
		if err != nil {
			return err
		}
		token, err = insertSession(ctx, tx, "learner_id", l.ID, now, learnerSessionTTL)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("new anonymous learner: %w", err)
	}
	return l, token, nil
}

// SignInLearner signs a learner into the class with joinCode under a display
// name. The same name in the same class is the same learner, so records
// follow a person across devices; there is no password, which suits a
// practice judge but means a classmate could sign in under another's name.
func (db *DB) SignInLearner(ctx context.Context, name, joinCode string) (l *Learner, token string, err error) {
	l, token, _, err = db.JoinClass(ctx, name, joinCode, 0)
	return l, token, err
}

func insertSession(ctx context.Context, tx txn, col string, id, now int64, ttl time.Duration) (string, error) {
	token, hash := newToken()
	// col is one of two constants, never input.
	_, err := tx.ExecContext(ctx, "INSERT INTO sessions(token_hash, "+col+", created_at, expires_at) VALUES (?, ?, ?, ?)",
		hash, id, now, now+ttl.Milliseconds())
	return token, err
}

// LearnerBySession returns the learner whose session token this is, or
// ErrNotFound for an unknown or expired token.
func (db *DB) LearnerBySession(ctx context.Context, token string) (*Learner, error) {
	if token == "" {
		return nil, ErrNotFound
	}
	l := &Learner{}
	var classID sql.NullInt64
	var created int64
	err := db.r.QueryRowContext(ctx, `SELECT l.id, l.name, l.class_id, l.created_at
		FROM sessions s JOIN learners l ON l.id = s.learner_id
		WHERE s.token_hash = ? AND s.expires_at > ?`, hashToken(token), db.nowMs()).
		Scan(&l.ID, &l.Name, &classID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("look up session: %w", err)
	}
	l.ClassID, l.CreatedAt = classID.Int64, msTime(created)
	return l, nil
}

// Learner returns the learner with the given id.
func (db *DB) Learner(ctx context.Context, id int64) (*Learner, error) {
	l := &Learner{}
	var classID sql.NullInt64
	var created int64
	err := db.r.QueryRowContext(ctx, "SELECT id, name, class_id, created_at FROM learners WHERE id = ?", id).
		Scan(&l.ID, &l.Name, &classID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("learner %d: %w", id, err)
	}
	l.ClassID, l.CreatedAt = classID.Int64, msTime(created)
	return l, nil
}

// ClassLearners lists a class's learners by name.
func (db *DB) ClassLearners(ctx context.Context, classID int64) ([]*Learner, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, name, created_at FROM learners WHERE class_id = ? ORDER BY name, id", classID)
	if err != nil {
		return nil, fmt.Errorf("class %d learners: %w", classID, err)
	}
	defer rows.Close()
	var ls []*Learner
	for rows.Next() {
		l := &Learner{ClassID: classID}
		var created int64
		if err := rows.Scan(&l.ID, &l.Name, &created); err != nil {
			return nil, fmt.Errorf("class %d learners: %w", classID, err)
		}
		l.CreatedAt = msTime(created)
		ls = append(ls, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("class %d learners: %w", classID, err)
	}
	return ls, nil
}

// EndSession deletes a session (learner's or instructor's); an unknown token is not an error.
func (db *DB) EndSession(ctx context.Context, token string) error {
	if _, err := db.w.ExecContext(ctx, "DELETE FROM sessions WHERE token_hash = ?", hashToken(token)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// PruneSessions deletes expired sessions.
func (db *DB) PruneSessions(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, "DELETE FROM sessions WHERE expires_at <= ?", db.nowMs()); err != nil {
		return fmt.Errorf("prune sessions: %w", err)
	}
	return nil
}
