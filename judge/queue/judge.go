package queue

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// storeTimeout bounds one records call made outside a request.
const storeTimeout = 10 * time.Second

// MaxJudgeAttempts is how often a submission that a wall-clock safety net
// stopped (verdict.OutcomeNotJudged) is judged in all before it is
// settled as not judged.
const MaxJudgeAttempts = 3

// tooBusy is the note of a submission the machine's load kept from a verdict.
const tooBusy = "the judge was too busy to finish it; it was not counted, please submit again later"

// Judger is the part of *judge.Engine the queue uses; tests swap in a
// fake to hold judgements where they need to.
type Judger interface {
	Judge(ctx context.Context, s judge.Submission) *verdict.Verdict
}

// Judging is what judging a queued submission needs: the records it is
// read from and stored in, the exercises, the engine.
type Judging struct {
	DB      *records.DB
	Catalog *exercise.Catalog
	Engine  Judger
	Log     *slog.Logger
	Metrics *Metrics // counts stored verdicts; nil counts nothing
}

// An Attempt is one judgement of a queued submission, as its queue asks
// for it.
type Attempt struct {
	ID   int64
	Only string // judge just this test, as a run; "" for all of the mode's
	// N is this attempt's number, from 1; Max how many a safety net may
	// cut short before the last one settles the submission as not judged.
	N, Max int
	// Limit, if set, bounds the engine's call (its own safety net, here
	// around the build as well); a queue with a job timeout of its own
	// leaves it 0.
	Limit time.Duration
	// Again, if set, is the note of a Retrying event published when a
	// later attempt (N > 1) starts.
	Again string
	// Publish receives the progress and the final event.
	Publish func(Event)
	// OnBusy, if set, is called when a safety net cut the attempt short.
	OnBusy func()
	// Queued is when the submission arrived, for the latency metric;
	// zero means the record's time.
	Queued time.Time
}

// State is how an attempt left its submission.
type State int

const (
	// Settled: done or not judged in the records, and the final event
	// published (unless another party had settled it already).
	Settled State = iota
	// Busy: a wall-clock safety net stopped the judgement with attempts
	// left; nothing is stored: the queue judges it again later.
	Busy
	// Stopped: ctx ended; nothing is stored: the queue hands the job
	// back or settles it.
	Stopped
	// Failed: the records could not be read or written; Err says why.
	Failed
)

// A Result is what became of an attempt.
type Result struct {
	State State
	Note  string // Busy: the engine's word; Failed: the learner's
	Err   error  // Failed
}

// Judge judges one queued submission once: it reads it from the records,
// marks it running, runs the engine (a panic there becomes an internal
// error, which charges the learner nothing), stores the verdict and
// publishes progress and the final event. A submission settled already
// (a duplicate delivery) is judged no more.
func (jg *Judging) Judge(ctx context.Context, a Attempt) Result {
	sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	sub, err := jg.DB.Submission(sctx, a.ID)
	cancel()
	if err != nil {
		return Result{State: Failed, Err: err, Note: "the submission could not be read"}
	}
	if sub.State == records.StateDone || sub.State == records.StateNotJudged {
		return Result{State: Settled} // settled already: a duplicate delivery judges nothing
	}
	ex, err := jg.Catalog.Find(sub.Exercise)
	if err != nil {
		jg.Settle(a.ID, "the exercise no longer exists", a.Publish)
		return Result{State: Settled}
	}
	if sub.State == records.StateQueued {
		sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := jg.DB.StartSubmission(sctx, a.ID); err != nil && !errors.Is(err, records.ErrState) {
			jg.Log.Error("start submission", "id", a.ID, "err", err)
		}
		cancel()
	}
	if a.N > 1 && a.Again != "" {
		a.Publish(Event{Kind: Retrying, Attempt: a.N, Note: a.Again})
	}

	start := time.Now()
	jctx := ctx
	if a.Limit > 0 {
		var cancel context.CancelFunc
		jctx, cancel = context.WithTimeout(ctx, a.Limit)
		defer cancel()
	}
	v := safeJudge(jctx, jg.Engine, jg.Log, judge.Submission{
		Exercise: ex, Code: []byte(sub.Code), FileName: ex.FileName(), Mode: engineMode(sub.Mode, a.Only), Only: a.Only, Seed: sub.Seed,
		Progress: func(ev verdict.Event) {
			if e, ok := progressEvent(ev); ok {
				a.Publish(e)
			}
		},
	})
	v = asRun(v, sub.Mode, a.Only)
	ms := time.Since(start).Milliseconds()
	if ctx.Err() != nil {
		return Result{State: Stopped}
	}
	if v == nil {
		v = internalError(sub.Mode, "the judge returned no verdict")
	}
	if v.Outcome == verdict.OutcomeNotJudged {
		// The clock stopped it, not the code: nothing is stored or
		// charged to the grade; it is judged again, when the machine
		// may be less busy, up to Max times.
		if a.OnBusy != nil {
			a.OnBusy()
		}
		if a.N < a.Max {
			return Result{State: Busy, Note: v.Message}
		}
		jg.Settle(a.ID, tooBusy, a.Publish)
		return Result{State: Settled}
	}
	sctx, cancel = context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := jg.DB.FinishSubmission(sctx, a.ID, v, ms); err != nil {
		if errors.Is(err, records.ErrState) {
			return Result{State: Settled} // settled meanwhile (a shutdown): nothing to store
		}
		return Result{State: Failed, Err: err, Note: "the result could not be saved"}
	}
	queued := a.Queued
	if queued.IsZero() {
		queued = sub.QueuedAt
	}
	jg.Metrics.observe(v, time.Duration(ms)*time.Millisecond, time.Since(queued))
	a.Publish(Event{Kind: Done, Verdict: v, Ms: ms})
	return Result{State: Settled}
}

// Settle stores a submission as not judged, with the reason in note, and
// publishes that: the learner is not charged.
func (jg *Judging) Settle(id int64, note string, publish func(Event)) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := jg.DB.AbandonSubmission(ctx, id, note); err != nil {
		jg.Log.Error("abandon submission", "id", id, "err", err)
	}
	publish(Event{Kind: NotJudged, Note: note})
}

// safeJudge keeps a panic in the engine from taking the process down: it
// becomes an internal error, which does not count against the learner.
func safeJudge(ctx context.Context, eng Judger, log *slog.Logger, sub judge.Submission) (v *verdict.Verdict) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("the judge panicked", "exercise", sub.Exercise.Slug, "panic", r)
			v = internalError(sub.Mode, "the judge failed; this attempt does not count")
		}
	}()
	return eng.Judge(ctx, sub)
}

func internalError(mode verdict.Mode, msg string) *verdict.Verdict {
	return &verdict.Verdict{Version: 3, Status: verdict.StatusError, Outcome: verdict.OutcomeInternalError,
		Message: msg, Mode: mode, Engine: judge.EngineVersion}
}

// engineMode is the mode the engine judges a submission in: a run of one
// test asks for it among all tests (the engine's run mode has only the
// sample tests), and is stored as the run it is.
func engineMode(mode verdict.Mode, only string) verdict.Mode {
	if only != "" {
		return verdict.ModeSubmit
	}
	return mode
}

// asRun words a run of one test's verdict as a run: a copy, since the
// engine may keep its verdicts.
func asRun(v *verdict.Verdict, mode verdict.Mode, only string) *verdict.Verdict {
	if only == "" || v == nil || v.Mode == mode {
		return v
	}
	c := *v
	c.Mode = mode
	return &c
}
