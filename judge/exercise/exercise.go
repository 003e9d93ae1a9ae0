package exercise

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"sigs.k8s.io/yaml"
)

// An exercise folder holds problem.md (front matter, the statement, and an
// explanation after ExplanationMarker), starter.go, solution.go, tests.yaml
// and mutants/*.go. Chapters are folders holding chapter.md and their
// exercises' folders.

// ExplanationMarker separates a statement from the explanation shown once
// the learner has passed.
const ExplanationMarker = "<!-- explanation -->"

// Exercise is one exercise, loaded and validated.
type Exercise struct {
	Number     int      `json:"number"`
	Slug       string   `json:"slug"`
	Title      string   `json:"title"`
	Chapter    string   `json:"chapter"`
	Difficulty string   `json:"difficulty"`
	Tags       []string `json:"tags"`
	// Order places the exercise in its chapter, before those with a
	// higher order; the number decides between equal orders (and where
	// none is given). An exercise written later can so come first.
	Order int `json:"order,omitempty"`

	Statement   string `json:"-"` // markdown
	Explanation string `json:"-"` // markdown, after ExplanationMarker
	Starter     []byte `json:"-"`
	Solution    []byte `json:"-"`
	Mutants     []Mutant
	Suite       *Suite `json:"-"`
	// Version is a content hash of every file in the folder.
	Version string `json:"version"`
	Dir     string `json:"-"` // folder inside the catalog's fs.FS
}

// ID is the number as learners type it.
func (e *Exercise) ID() string { return strconv.Itoa(e.Number) }

// FileName is the name of the learner's file in a workspace.
func (e *Exercise) FileName() string { return e.Slug + ".go" }

// Mutant is a known-buggy variant of the solution that the tests must
// reject, with the oracle expected to catch it.
type Mutant struct {
	Name   string
	Code   []byte
	Expect string
}

// Chapter is a chapter page and its exercises.
type Chapter struct {
	Slug      string
	Title     string
	Order     int
	Body      string // markdown, without front matter
	Exercises []*Exercise
}

// Catalog is every chapter and exercise in a folder tree.
type Catalog struct {
	Chapters  []*Chapter
	Exercises []*Exercise // by number
}

// Find returns the exercise with the given number ("171", "#171", "0171")
// or slug.
func (c *Catalog) Find(id string) (*Exercise, error) {
	id = strings.TrimPrefix(strings.TrimSpace(id), "#")
	if n, err := strconv.Atoi(id); err == nil {
		for _, e := range c.Exercises {
			if e.Number == n {
				return e, nil
			}
		}
	}
	for _, e := range c.Exercises {
		if e.Slug == id {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no exercise %q; `judge list` shows them all", id)
}

// Chapter returns the chapter with the given slug, or nil.
func (c *Catalog) Chapter(slug string) *Chapter {
	for _, ch := range c.Chapters {
		if ch.Slug == slug {
			return ch
		}
	}
	return nil
}

type frontMatter struct {
	Number     int      `json:"number"`
	Slug       string   `json:"slug"`
	Title      string   `json:"title"`
	Chapter    string   `json:"chapter"`
	Difficulty string   `json:"difficulty"`
	Tags       []string `json:"tags"`
	Order      int      `json:"order"`
}

// splitFrontMatter splits "---\nyaml\n---\nbody".
func splitFrontMatter(name string, b []byte) (frontMatter, string, error) {
	var fm frontMatter
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return fm, "", fmt.Errorf("%s:1: missing front matter (a block between --- lines)", name)
	}
	end := strings.Index(s[4:], "\n---\n")
	if end < 0 {
		return fm, "", fmt.Errorf("%s:1: front matter is not closed by a --- line", name)
	}
	if err := yaml.UnmarshalStrict([]byte(s[4:4+end]), &fm); err != nil {
		return fm, "", fmt.Errorf("%s:2: front matter: %v", name, err)
	}
	return fm, strings.TrimLeft(s[4+end+5:], "\n"), nil
}

var difficulties = []string{"easy", "medium", "hard"}

// LoadCatalog reads every chapter (a folder with chapter.md) and exercise (a
// folder with problem.md) in fsys.
func LoadCatalog(fsys fs.FS, checks Checker) (*Catalog, error) {
	c := &Catalog{}
	var problems []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		switch d.Name() {
		case "chapter.md":
			ch, err := loadChapter(fsys, p)
			if err != nil {
				return err
			}
			c.Chapters = append(c.Chapters, ch)
		case "problem.md":
			problems = append(problems, path.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, dir := range problems {
		e, err := LoadExercise(fsys, dir, checks)
		if err != nil {
			return nil, err
		}
		ch := c.Chapter(e.Chapter)
		if ch == nil {
			return nil, fmt.Errorf("%s/problem.md: chapter %q has no chapter.md", dir, e.Chapter)
		}
		for _, o := range c.Exercises {
			if o.Number == e.Number || o.Slug == e.Slug {
				return nil, fmt.Errorf("%s and %s: same number or slug", o.Dir, e.Dir)
			}
		}
		ch.Exercises = append(ch.Exercises, e)
		c.Exercises = append(c.Exercises, e)
	}
	byNumber := func(a, b *Exercise) int { return a.Number - b.Number }
	slices.SortFunc(c.Exercises, byNumber)
	for _, ch := range c.Chapters {
		slices.SortFunc(ch.Exercises, func(a, b *Exercise) int { return cmp.Or(a.Order-b.Order, a.Number-b.Number) })
	}
	slices.SortFunc(c.Chapters, func(a, b *Chapter) int {
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Slug, b.Slug)
	})
	return c, nil
}

func loadChapter(fsys fs.FS, p string) (*Chapter, error) {
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	fm, body, err := splitFrontMatter(p, b)
	if err != nil {
		return nil, err
	}
	if fm.Slug == "" || fm.Title == "" {
		return nil, fmt.Errorf("%s: front matter needs slug and title", p)
	}
	return &Chapter{Slug: fm.Slug, Title: fm.Title, Order: fm.Order, Body: body}, nil
}

// LoadExercise reads and validates the exercise in folder dir of fsys.
func LoadExercise(fsys fs.FS, dir string, c Checker) (*Exercise, error) {
	read := func(name string) ([]byte, error) { return fs.ReadFile(fsys, path.Join(dir, name)) }
	pm, err := read("problem.md")
	if err != nil {
		return nil, err
	}
	fm, body, err := splitFrontMatter(path.Join(dir, "problem.md"), pm)
	if err != nil {
		return nil, err
	}
	e := &Exercise{Number: fm.Number, Slug: fm.Slug, Title: fm.Title, Chapter: fm.Chapter,
		Difficulty: fm.Difficulty, Tags: fm.Tags, Order: fm.Order, Dir: dir}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{"number", e.Number > 0}, {"slug", validSlug(e.Slug)}, {"title", e.Title != ""},
		{"chapter", e.Chapter != ""}, {"difficulty", slices.Contains(difficulties, e.Difficulty)},
		{"tags", len(e.Tags) > 0}} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s/problem.md: front matter lacks or has a bad %s", dir, strings.Join(missing, ", "))
	}
	e.Statement, e.Explanation, _ = strings.Cut(body, ExplanationMarker)
	e.Statement = strings.TrimSpace(e.Statement) + "\n"
	e.Explanation = strings.TrimSpace(e.Explanation) + "\n"
	if e.Starter, err = read("starter.go"); err != nil {
		return nil, err
	}
	solution, err := read("solution.go")
	if err != nil {
		return nil, err
	}
	e.Starter, e.Solution = learnerSource(e.Starter), learnerSource(solution)
	tb, err := read("tests.yaml")
	if err != nil {
		return nil, err
	}
	if e.Suite, err = ParseSuite(path.Join(dir, "tests.yaml"), tb, c); err != nil {
		return nil, err
	}
	if err := loadRegressions(fsys, dir, e.Suite, c); err != nil {
		return nil, err
	}
	for _, m := range e.Suite.Mutants {
		code, err := read(m.File)
		if err != nil {
			return nil, fmt.Errorf("%s/tests.yaml: mutant %s: %w", dir, m.File, err)
		}
		if strings.HasSuffix(m.File, ".patch") {
			if code, err = ApplyPatch(code, solution); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", dir, m.File, err)
			}
		}
		name := strings.TrimSuffix(strings.TrimSuffix(path.Base(m.File), ".go"), ".patch")
		e.Mutants = append(e.Mutants, Mutant{Name: name, Code: learnerSource(code), Expect: m.Expect})
	}
	if e.Version, err = hashDir(fsys, dir); err != nil {
		return nil, err
	}
	return e, nil
}

// RegressionsDir is the folder of an exercise's regression scenarios:
// generated scenarios that caught a bug at one seed and not at another,
// shrunk and saved (judge regress) for the author to review, so that
// every seed keeps them. Each file holds one test with its own seed, as
// judge test --scenario reads it; they run after the named tests, in
// submit mode, at that seed whatever the submission's.
const RegressionsDir = "regressions"

func loadRegressions(fsys fs.FS, dir string, s *Suite, c Checker) error {
	paths, err := fs.Glob(fsys, path.Join(dir, RegressionsDir, "*.yaml"))
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, t := range s.Tests {
		names[t.Name] = true
	}
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		t, err := ParseScenario(p, b, c)
		switch {
		case err != nil:
			return err
		case t.Seed == 0:
			return fmt.Errorf("%s: a regression scenario keeps the seed it failed at (seed: N)", p)
		case t.Sample:
			return fmt.Errorf("%s: a regression scenario is not a sample", p)
		case names[t.Name] || isGeneratedName(t.Name):
			return fmt.Errorf("%s: another test is named %q", p, t.Name)
		}
		names[t.Name] = true
		t.Regression = true
		s.Tests = append(s.Tests, t)
	}
	return nil
}

func validSlug(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// ApplyPatch applies a mutant written as a unified diff against
// solution.go, so that a mutant shows exactly its bug and breaks loudly
// when the solution changes under it.
func ApplyPatch(patch, solution []byte) ([]byte, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, fmt.Errorf("not a unified diff: %w", err)
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("a mutant patch must change solution.go alone, not %d files", len(files))
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(solution), files[0]); err != nil {
		return nil, fmt.Errorf("no longer applies to solution.go (regenerate it with diff -u): %w", err)
	}
	return out.Bytes(), nil
}

// buildIgnore keeps exercise sources out of this module's own build; it is
// removed before a learner sees the file.
const buildIgnore = "//go:build ignore\n"

// LearnerSource is a source file as a learner sees it: without the
// `//go:build ignore` line that keeps exercise files out of this module.
func LearnerSource(b []byte) []byte { return learnerSource(b) }

func learnerSource(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if bytes.HasPrefix(b, []byte(buildIgnore)) {
		b = bytes.TrimLeft(b[len(buildIgnore):], "\n")
	}
	return b
}

// hashDir hashes every file's path and content, in walk (lexical) order.
func hashDir(fsys fs.FS, dir string) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", strings.TrimPrefix(p, dir), len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12], err
}
