// Package progress is the family of a controller that reports a
// Deployment's conditions on a virtual clock (exercise 176): Available
// from the Ready Pods, Progressing from the rollout's progress, and
// ProgressDeadlineExceeded once none has been seen for the Deployment's
// progressDeadlineSeconds.
package progress
