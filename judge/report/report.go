// Package report computes instructor reports from the records: the class
// matrix (learners × exercises), per-exercise analytics with the map of
// failing tests, oracles and fault classes, and code similarity. It writes
// them as CSV, JSON or one self-contained HTML file, and offers the pieces
// the instructor pages share: highlighting, diffs and charts.
//
// It reads the records and the verdict vocabulary, never the engine: the
// server and `judge report` alike describe the catalog's exercises to it as
// Exercise values, made by CatalogExercises (which, until the catalog
// leaves package judge, is the one place that imports it).
package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"ctrljudge/judge/records"
)

// Input is everything a report is computed from.
type Input struct {
	Class       *records.Class
	Learners    []*records.Learner
	Submissions []*records.Submission // oldest first
	Tests       []*records.TestRow
	Due         map[string]time.Time
	// Exercises lists the known exercises in order; exercises seen only in
	// submissions or due dates are appended by Compute.
	Exercises []Exercise
}

// Exercise is what a report knows of an exercise in the catalog. Callers
// fill it from the catalog, so that reports need records, not the engine.
type Exercise struct {
	Slug    string
	Number  int
	Title   string
	Version string // the catalog's current version
	Starter []byte // the starter code, which similarity leaves out
	// Solution is the reference solution: learners' code close to it is
	// listed for review. Nil lists nothing.
	Solution []byte
}

// Load reads a class's records. exercises may be nil: exercises are then
// named by their slugs and no starter code is excluded from similarity.
func Load(ctx context.Context, db *records.DB, classID int64, exercises []Exercise) (*Input, error) {
	in := &Input{Exercises: exercises}
	var err error
	if in.Class, err = db.Class(ctx, classID); err != nil {
		return nil, err
	}
	if in.Learners, err = db.ClassLearners(ctx, classID); err != nil {
		return nil, err
	}
	if in.Submissions, err = db.ClassSubmissions(ctx, classID); err != nil {
		return nil, err
	}
	if in.Tests, err = db.ClassTestRows(ctx, classID); err != nil {
		return nil, err
	}
	if in.Due, err = db.DueDates(ctx, classID); err != nil {
		return nil, err
	}
	return in, nil
}

// Options tune Compute.
type Options struct {
	// Now is the report's "as of" time (zero: the current time).
	Now time.Time
	// Threshold is the similarity score from which a pair is listed
	// (zero: DefaultThreshold).
	Threshold float64
}

// Report is a class's whole report. Its JSON form is the JSON export.
type Report struct {
	Class       ClassInfo      `json:"class"`
	GeneratedAt time.Time      `json:"generated_at"`
	Exercises   []ExerciseInfo `json:"exercises"`
	Learners    []*LearnerRow  `json:"learners"`
	Analytics   []*Analytics   `json:"analytics"`
	Similarity  Similarity     `json:"similarity"`

	code map[int64]string // code of the submissions in similar pairs
}

// ClassInfo names the class.
type ClassInfo struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	JoinCode string `json:"join_code"`
}

// ExerciseInfo is one matrix column.
type ExerciseInfo struct {
	Slug    string     `json:"slug"`
	Number  int        `json:"number,omitempty"`
	Title   string     `json:"title,omitempty"`
	Version string     `json:"version,omitempty"` // the catalog's current version
	Due     *time.Time `json:"due,omitempty"`

	starter, solution []byte
}

// Label is the exercise's short display name.
func (e ExerciseInfo) Label() string {
	if e.Number > 0 {
		return fmt.Sprintf("%d %s", e.Number, e.Slug)
	}
	return e.Slug
}

// Compute builds the report. Its output depends only on in and opts.
func Compute(in *Input, opts Options) *Report {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.Threshold == 0 {
		opts.Threshold = DefaultThreshold
	}
	r := &Report{GeneratedAt: opts.Now.UTC()}
	if in.Class != nil {
		r.Class = ClassInfo{ID: in.Class.ID, Name: in.Class.Name, JoinCode: in.Class.JoinCode}
	}
	r.Exercises = exerciseColumns(in)
	r.Learners = matrix(in, r.Exercises)
	r.Analytics = analytics(in, r.Exercises, r.Learners)
	r.Similarity = similarity(in, r.Exercises, opts.Threshold)
	r.code = map[int64]string{}
	for _, s := range in.Submissions {
		for _, p := range r.Similarity.Pairs {
			if s.ID == p.A.Submission || s.ID == p.B.Submission {
				r.code[s.ID] = s.Code
			}
		}
		for _, m := range r.Similarity.Reference {
			if s.ID == m.Submission {
				r.code[s.ID] = s.Code
			}
		}
	}
	return r
}

// exerciseColumns lists the catalog's exercises, then any other slug seen
// in the records, sorted.
func exerciseColumns(in *Input) []ExerciseInfo {
	var cols []ExerciseInfo
	seen := map[string]bool{}
	for _, e := range in.Exercises {
		cols = append(cols, ExerciseInfo{Slug: e.Slug, Number: e.Number, Title: e.Title, Version: e.Version, starter: e.Starter, solution: e.Solution})
		seen[e.Slug] = true
	}
	var extra []string
	add := func(slug string) {
		if !seen[slug] {
			seen[slug] = true
			extra = append(extra, slug)
		}
	}
	for _, s := range in.Submissions {
		add(s.Exercise)
	}
	for slug := range in.Due {
		add(slug)
	}
	slices.Sort(extra)
	for _, slug := range extra {
		cols = append(cols, ExerciseInfo{Slug: slug})
	}
	for i := range cols {
		if d, ok := in.Due[cols[i].Slug]; ok {
			d = d.UTC()
			cols[i].Due = &d
		}
	}
	return cols
}

// ratio is a share rounded to three places, so reports compare byte for byte.
func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(d)*1000) / 1000
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func medianMs(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Duration writes a span of milliseconds the way people say it: 45s, 12m, 3h 5m, 2d 4h.
func Duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

func sortCounts(cs []Count) {
	slices.SortFunc(cs, func(a, b Count) int {
		return cmp.Or(b.Learners-a.Learners, b.Submissions-a.Submissions, cmp.Compare(a.Name, b.Name))
	})
}
