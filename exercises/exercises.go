// Package exercises holds the built-in chapters and exercises, embedded in
// the binary. Each chapter is a folder with chapter.md; each exercise a
// folder inside it with problem.md, starter.go, solution.go, tests.yaml and
// mutants/ (unified diffs against solution.go). The Go files carry a
// `//go:build ignore` line so this module's own build skips them; the judge
// strips it before a learner sees them.
package exercises

import (
	"embed"
	"io/fs"
)

//go:embed */*
var content embed.FS

// FS is the built-in exercise tree, as exercise.LoadCatalog reads it.
var FS fs.FS = content
