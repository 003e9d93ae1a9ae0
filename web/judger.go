package web

import (
	"context"

	"ctrljudge/judge"
	"ctrljudge/judge/verdict"
)

// judger is the part of *judge.Engine the server uses; tests swap in a
// fake to hold judgements where they need to.
type judger interface {
	Judge(ctx context.Context, s judge.Submission) *verdict.Verdict
}
