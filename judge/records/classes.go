package records

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

const (
	joinCodeLen     = 8
	joinCodeAlpha   = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I: read aloud in class
	minPasswordLen  = 10                                 // characters
	maxPasswordLen  = 72                                 // bytes: bcrypt's limit
	bcryptCost      = 12
	joinCodeRetries = 5
)

// Instructor is a teacher who owns classes.
type Instructor struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// Class is a group of learners with a join code, owned by one instructor.
type Class struct {
	ID           int64
	InstructorID int64
	Name         string
	JoinCode     string
	CreatedAt    time.Time
}

// NormalizeJoinCode upper-cases a join code and drops spaces and dashes.
func NormalizeJoinCode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r == ' ' || r == '-' || r == '\t' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// AddInstructor creates an instructor with a bcrypt hash of password.
func (db *DB) AddInstructor(ctx context.Context, name, password string) (*Instructor, error) {
	name, err := CleanName(name)
	if err != nil {
		return nil, err
	}
	if len([]rune(password)) < minPasswordLen {
		return nil, fmt.Errorf("add instructor: the password needs at least %d characters", minPasswordLen)
	}
	if len(password) > maxPasswordLen {
		return nil, fmt.Errorf("add instructor: the password may have at most %d bytes", maxPasswordLen)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcryptCost)
	if err != nil {
		return nil, fmt.Errorf("add instructor: %w", err)
	}
	now := db.nowMs()
	var id int64
	err = db.w.QueryRowContext(ctx, "INSERT INTO instructors(name, password_hash, created_at) VALUES (?, ?, ?) RETURNING id", name, string(hash), now).Scan(&id)
	if err != nil {
		if isUnique(err) {
			return nil, fmt.Errorf("add instructor: %q already exists", name)
		}
		return nil, fmt.Errorf("add instructor: %w", err)
	}
	return &Instructor{ID: id, Name: name, CreatedAt: msTime(now)}, nil
}

// SetInstructorPassword replaces an instructor's password and ends their sessions.
func (db *DB) SetInstructorPassword(ctx context.Context, name, password string) error {
	if len([]rune(password)) < minPasswordLen || len(password) > maxPasswordLen {
		return fmt.Errorf("set password: it needs %d characters to %d bytes", minPasswordLen, maxPasswordLen)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcryptCost)
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return db.tx(ctx, func(tx txn) error {
		var id int64
		if err := tx.QueryRowContext(ctx, "SELECT id FROM instructors WHERE name = ?", name).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("set password: instructor %q: %w", name, ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE instructors SET password_hash = ? WHERE id = ?", string(hash), id); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE instructor_id = ?", id)
		return err
	})
}

// Instructors lists every instructor by name.
func (db *DB) Instructors(ctx context.Context) ([]*Instructor, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, name, created_at FROM instructors ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("instructors: %w", err)
	}
	defer rows.Close()
	var out []*Instructor
	for rows.Next() {
		in := &Instructor{}
		var created int64
		if err := rows.Scan(&in.ID, &in.Name, &created); err != nil {
			return nil, fmt.Errorf("instructors: %w", err)
		}
		in.CreatedAt = msTime(created)
		out = append(out, in)
	}
	return out, rows.Err()
}

// dummyHash makes a sign-in with an unknown name cost as much as a wrong
// password, so timing does not reveal which names exist.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("ctrljudge-no-such-instructor"), bcryptCost)
	return h
})

// SignInInstructor checks a name and password and opens a session;
// ErrBadPassword when either is wrong.
func (db *DB) SignInInstructor(ctx context.Context, name, password string) (*Instructor, string, error) {
	in := &Instructor{}
	var hash string
	var created int64
	err := db.r.QueryRowContext(ctx, "SELECT id, name, password_hash, created_at FROM instructors WHERE name = ?", strings.TrimSpace(name)).
		Scan(&in.ID, &in.Name, &hash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return nil, "", ErrBadPassword
	}
	if err != nil {
		return nil, "", fmt.Errorf("instructor sign-in: %w", err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		return nil, "", ErrBadPassword
	}
	in.CreatedAt = msTime(created)
	var token string
	err = db.tx(ctx, func(tx txn) error {
		var err error
		token, err = insertSession(ctx, tx, "instructor_id", in.ID, db.nowMs(), instructorSessionTTL)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("instructor sign-in: %w", err)
	}
	return in, token, nil
}

// InstructorBySession returns the instructor whose session token this is,
// or ErrNotFound.
func (db *DB) InstructorBySession(ctx context.Context, token string) (*Instructor, error) {
	if token == "" {
		return nil, ErrNotFound
	}
	in := &Instructor{}
	var created int64
	err := db.r.QueryRowContext(ctx, `SELECT i.id, i.name, i.created_at FROM sessions s JOIN instructors i ON i.id = s.instructor_id
		WHERE s.token_hash = ? AND s.expires_at > ?`, hashToken(token), db.nowMs()).Scan(&in.ID, &in.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("look up session: %w", err)
	}
	in.CreatedAt = msTime(created)
	return in, nil
}

func newJoinCode() string {
	b := make([]byte, joinCodeLen)
	rand.Read(b)
	for i := range b {
		b[i] = joinCodeAlpha[int(b[i])%len(joinCodeAlpha)] // 256 is a multiple of 32: no bias
	}
	return string(b)
}

// CreateClass creates a class owned by an instructor with a fresh join code.
func (db *DB) CreateClass(ctx context.Context, instructorID int64, name string) (*Class, error) {
	name, err := CleanName(name)
	if err != nil {
		return nil, err
	}
	now := db.nowMs()
	for range joinCodeRetries {
		c := &Class{InstructorID: instructorID, Name: name, JoinCode: newJoinCode(), CreatedAt: msTime(now)}
		err := db.w.QueryRowContext(ctx, "INSERT INTO classes(instructor_id, name, join_code, created_at) VALUES (?, ?, ?, ?) RETURNING id",
			instructorID, name, c.JoinCode, now).Scan(&c.ID)
		if err != nil {
			if isUnique(err) {
				continue // join code taken: draw again
			}
			return nil, fmt.Errorf("create class: %w", err)
		}
		return c, nil
	}
	return nil, errors.New("create class: no free join code after several draws")
}

const classCols = "id, instructor_id, name, join_code, created_at"

func scanClass(r scanner) (*Class, error) {
	c := &Class{}
	var created int64
	if err := r.Scan(&c.ID, &c.InstructorID, &c.Name, &c.JoinCode, &created); err != nil {
		return nil, err
	}
	c.CreatedAt = msTime(created)
	return c, nil
}

// Class returns the class with the given id.
func (db *DB) Class(ctx context.Context, id int64) (*Class, error) {
	c, err := scanClass(db.r.QueryRowContext(ctx, "SELECT "+classCols+" FROM classes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("class %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("class %d: %w", id, err)
	}
	return c, nil
}

// FindClass finds a class by id ("12"), join code or exact name, for the
// command line; a name shared by several classes is an error.
func (db *DB) FindClass(ctx context.Context, ref string) (*Class, error) {
	var id int64
	if _, err := fmt.Sscanf(ref, "%d", &id); err == nil && fmt.Sprint(id) == ref {
		return db.Class(ctx, id)
	}
	c, err := scanClass(db.r.QueryRowContext(ctx, "SELECT "+classCols+" FROM classes WHERE join_code = ?", NormalizeJoinCode(ref)))
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("class %q: %w", ref, err)
	}
	cs, err := db.queryClasses(ctx, "name = ?", ref)
	if err != nil {
		return nil, err
	}
	switch len(cs) {
	case 0:
		return nil, fmt.Errorf("class %q: %w", ref, ErrNotFound)
	case 1:
		return cs[0], nil
	}
	return nil, fmt.Errorf("class %q: %d classes have that name; give the id or join code", ref, len(cs))
}

// InstructorClasses lists an instructor's classes, newest first.
func (db *DB) InstructorClasses(ctx context.Context, instructorID int64) ([]*Class, error) {
	return db.queryClasses(ctx, "instructor_id = ? ORDER BY id DESC", instructorID)
}

// Classes lists every class by id.
func (db *DB) Classes(ctx context.Context) ([]*Class, error) {
	return db.queryClasses(ctx, "true ORDER BY id")
}

func (db *DB) queryClasses(ctx context.Context, where string, args ...any) ([]*Class, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+classCols+" FROM classes WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("classes: %w", err)
	}
	defer rows.Close()
	var out []*Class
	for rows.Next() {
		c, err := scanClass(rows)
		if err != nil {
			return nil, fmt.Errorf("classes: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetDueDate sets (or, with a zero time, clears) an exercise's due date in a class.
func (db *DB) SetDueDate(ctx context.Context, classID int64, exercise string, due time.Time) error {
	var err error
	if due.IsZero() {
		_, err = db.w.ExecContext(ctx, "DELETE FROM due_dates WHERE class_id = ? AND exercise = ?", classID, exercise)
	} else {
		_, err = db.w.ExecContext(ctx, `INSERT INTO due_dates(class_id, exercise, due_at) VALUES (?, ?, ?)
			ON CONFLICT (class_id, exercise) DO UPDATE SET due_at = excluded.due_at`, classID, exercise, due.UnixMilli())
	}
	if err != nil {
		return fmt.Errorf("set due date: %w", err)
	}
	return nil
}

// DueDates maps a class's exercises to their due dates.
func (db *DB) DueDates(ctx context.Context, classID int64) (map[string]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT exercise, due_at FROM due_dates WHERE class_id = ?", classID)
	if err != nil {
		return nil, fmt.Errorf("due dates: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var ex string
		var ms int64
		if err := rows.Scan(&ex, &ms); err != nil {
			return nil, fmt.Errorf("due dates: %w", err)
		}
		out[ex] = msTime(ms)
	}
	return out, rows.Err()
}
