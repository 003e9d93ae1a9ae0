// Package text clips learner-controlled text where it enters a verdict
// and words counts ("3 Pods", "2nd", "1,000,000"), for the judge and its
// parts alike. The bounds are in text.go; judge/RATIONALE.md, "Why these
// bounds?", says why each is what it is.
package text
