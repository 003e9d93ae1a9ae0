package records

import (
	"context"
	"fmt"
	"time"
)

// pruneBatch bounds the learners one statement deletes, so that a clean-up
// after a flood holds the single writer for milliseconds at a time, not
// for one long transaction that other writers would queue behind.
const pruneBatch = 500

// PruneAbandonedLearners deletes anonymous learners (no name, no class)
// that were created, last given a session and last saved a draft more than
// idle ago, have no submission, and hold nothing anyone can come back to:
// either no draft at all, or drafts but no live session. An anonymous
// learner is reachable only through its session cookie, so such drafts are
// unreachable; the browser keeps its own copy anyway. Sessions, drafts and
// progress go with the learner (ON DELETE CASCADE); submissions are
// records and keep their learner. It returns how many learners it deleted.
func (db *DB) PruneAbandonedLearners(ctx context.Context, idle time.Duration) (int64, error) {
	now := db.nowMs()
	cutoff := now - idle.Milliseconds()
	var total int64
	for {
		res, err := db.w.ExecContext(ctx, `DELETE FROM learners WHERE id IN (
			SELECT l.id FROM learners l
			WHERE l.name = '' AND l.class_id IS NULL AND l.created_at < ?1
			  AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.learner_id = l.id)
			  AND NOT EXISTS (SELECT 1 FROM sessions x WHERE x.learner_id = l.id AND x.created_at >= ?1)
			  AND NOT EXISTS (SELECT 1 FROM drafts d WHERE d.learner_id = l.id AND d.updated_at >= ?1)
			  AND (NOT EXISTS (SELECT 1 FROM drafts d WHERE d.learner_id = l.id)
			       OR NOT EXISTS (SELECT 1 FROM sessions x WHERE x.learner_id = l.id AND x.expires_at > ?2))
			LIMIT ?3)`, cutoff, now, pruneBatch)
		if err != nil {
			return total, fmt.Errorf("prune abandoned learners: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("prune abandoned learners: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}
