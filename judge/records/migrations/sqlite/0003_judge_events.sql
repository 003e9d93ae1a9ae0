-- 0003: judging in other processes (PostgreSQL's judge workers): the
-- progress a worker reports, which the server follows and streams to the
-- learner, and each worker's last sign of life. Kept on SQLite too, so
-- that both databases have one schema.
CREATE TABLE judge_events (
	id            INTEGER PRIMARY KEY,
	submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
	kind          TEXT NOT NULL,
	data          TEXT NOT NULL,
	created_at    INTEGER NOT NULL
);
CREATE INDEX judge_events_submission ON judge_events(submission_id, id);

CREATE TABLE judge_workers (
	id         TEXT PRIMARY KEY,
	host       TEXT NOT NULL,
	slots      INTEGER NOT NULL,
	started_at INTEGER NOT NULL,
	seen_at    INTEGER NOT NULL
);
