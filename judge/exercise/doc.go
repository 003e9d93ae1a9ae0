// Package exercise loads the exercise catalog: chapters, statements,
// starters, solutions, mutants and each exercise's tests.yaml (Suite),
// checked for syntax. It links no engine: the records, reports and
// instructor pages read exercises through it. The engine adds its deeper
// checks (the model names a family, the generator supports what the
// generate: block asks) through the Checker it passes in.
package exercise
