-- 0001: learners, sessions, classes, submissions with per-test rows, drafts, progress.
-- Times are Unix milliseconds (UTC); 0 means "not reached".

CREATE TABLE instructors (
	id            INTEGER PRIMARY KEY,
	name          TEXT NOT NULL UNIQUE,
	password_hash TEXT NOT NULL,
	created_at    INTEGER NOT NULL
);

CREATE TABLE classes (
	id            INTEGER PRIMARY KEY,
	instructor_id INTEGER NOT NULL REFERENCES instructors(id),
	name          TEXT NOT NULL,
	join_code     TEXT NOT NULL UNIQUE,
	created_at    INTEGER NOT NULL
);

CREATE TABLE due_dates (
	class_id INTEGER NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
	exercise TEXT NOT NULL,
	due_at   INTEGER NOT NULL,
	PRIMARY KEY (class_id, exercise)
);

CREATE TABLE learners (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	class_id   INTEGER REFERENCES classes(id),
	created_at INTEGER NOT NULL
);
-- A named learner is one person per class: signing in again finds the same records.
CREATE UNIQUE INDEX learners_class_name ON learners(class_id, name) WHERE class_id IS NOT NULL;

-- Sessions keep only a SHA-256 of the token; exactly one of learner_id, instructor_id is set.
CREATE TABLE sessions (
	token_hash    TEXT PRIMARY KEY,
	learner_id    INTEGER REFERENCES learners(id) ON DELETE CASCADE,
	instructor_id INTEGER REFERENCES instructors(id) ON DELETE CASCADE,
	created_at    INTEGER NOT NULL,
	expires_at    INTEGER NOT NULL,
	CHECK ((learner_id IS NULL) <> (instructor_id IS NULL))
);

CREATE TABLE submissions (
	id               INTEGER PRIMARY KEY,
	learner_id       INTEGER NOT NULL REFERENCES learners(id),
	class_id         INTEGER REFERENCES classes(id),
	exercise         TEXT NOT NULL,
	exercise_version TEXT NOT NULL DEFAULT '',
	engine           TEXT NOT NULL DEFAULT '',
	mode             TEXT NOT NULL CHECK (mode IN ('run', 'submit')),
	code             TEXT NOT NULL,
	code_hash        TEXT NOT NULL,
	seed             INTEGER NOT NULL DEFAULT 0,
	state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'not_judged')),
	outcome          TEXT NOT NULL DEFAULT '',
	note             TEXT NOT NULL DEFAULT '',
	passed           INTEGER NOT NULL DEFAULT 0,
	total            INTEGER NOT NULL DEFAULT 0,
	duration_ms      INTEGER NOT NULL DEFAULT 0,
	queued_at        INTEGER NOT NULL,
	started_at       INTEGER NOT NULL DEFAULT 0,
	finished_at      INTEGER NOT NULL DEFAULT 0,
	verdict          BLOB,
	-- A re-judge is a new row pointing at the learner's original submission.
	rejudge_of       INTEGER REFERENCES submissions(id)
);
CREATE INDEX submissions_learner ON submissions(learner_id, exercise, id);
CREATE INDEX submissions_class ON submissions(class_id, exercise, id);
CREATE INDEX submissions_state ON submissions(state) WHERE state IN ('queued', 'running');

CREATE TABLE test_results (
	submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
	idx           INTEGER NOT NULL,
	name          TEXT NOT NULL,
	status        TEXT NOT NULL,
	sample        INTEGER NOT NULL DEFAULT 0,
	oracle        TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (submission_id, idx)
);

CREATE TABLE test_fault_classes (
	submission_id INTEGER NOT NULL,
	idx           INTEGER NOT NULL,
	fault_class   TEXT NOT NULL,
	PRIMARY KEY (submission_id, idx, fault_class),
	FOREIGN KEY (submission_id, idx) REFERENCES test_results(submission_id, idx) ON DELETE CASCADE
);

CREATE TABLE drafts (
	learner_id INTEGER NOT NULL REFERENCES learners(id) ON DELETE CASCADE,
	exercise   TEXT NOT NULL,
	code       TEXT NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (learner_id, exercise)
);

CREATE TABLE progress (
	learner_id INTEGER NOT NULL REFERENCES learners(id) ON DELETE CASCADE,
	exercise   TEXT NOT NULL,
	state      TEXT NOT NULL CHECK (state IN ('tried', 'solved')),
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (learner_id, exercise)
);
