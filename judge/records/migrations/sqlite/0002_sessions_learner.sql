-- 0002: find a learner's sessions without scanning them all: deleting an
-- abandoned learner cascades to its sessions, and the clean-up asks
-- whether a learner still has a live one.
CREATE INDEX sessions_learner ON sessions(learner_id) WHERE learner_id IS NOT NULL;
