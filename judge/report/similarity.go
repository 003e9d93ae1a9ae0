package report

import (
	"bytes"
	"cmp"
	"go/scanner"
	"go/token"
	"hash/fnv"
	"slices"
	"strings"

	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

// Similarity settings. A run of shared code at least kgramTokens+window-1
// tokens long is always caught (the winnowing guarantee).
const (
	kgramTokens = 15 // tokens per fingerprinted k-gram
	window      = 8  // k-grams per winnowing window
	// DefaultThreshold is the score from which a pair is listed.
	DefaultThreshold = 0.6
	// minShared keeps tiny overlaps (a few idioms) out of the list.
	minShared = 5
	// commonShare: fingerprints held by more than this share of the
	// learners (with at least commonMinLearners of them) are idioms of the
	// exercise, not evidence, and are dropped like the starter's.
	commonShare       = 0.5
	commonMinLearners = 4
)

// Similarity lists pairs of learners whose code for an exercise shares
// many fingerprints. It is evidence for a person to review, not a verdict:
// short exercises and common idioms make honest code look alike.
type Similarity struct {
	Threshold float64 `json:"threshold"`
	Pairs     []*Pair `json:"pairs"`
	// Reference lists latest submits close to the exercise's reference
	// solution, by the same fingerprints (starter left out, but not the
	// idioms the class shares: the whole class may be close to it).
	Reference []*ReferenceMatch `json:"reference"`
}

// ReferenceMatch is a learner's latest submit of an exercise that shares
// many fingerprints with the reference solution.
type ReferenceMatch struct {
	Exercise     string `json:"exercise"`
	Learner      int64  `json:"learner"`
	Name         string `json:"name"`
	Submission   int64  `json:"submission"`
	Fingerprints int    `json:"fingerprints"` // the submit's
	Shared       int    `json:"shared"`       // fingerprints the solution has too
	// Share is of the submit's fingerprints the solution has; Coverage,
	// of the solution's that the submit has. Score is the larger.
	Share    float64 `json:"share"`
	Coverage float64 `json:"coverage"`
	Score    float64 `json:"score"`
	// Identical: the same code as the solution but for spaces and line
	// breaks (comments and names count).
	Identical bool `json:"identical"`
}

// Pair is two learners' latest submits of one exercise.
type Pair struct {
	Exercise string   `json:"exercise"`
	A        PairSide `json:"a"`
	B        PairSide `json:"b"`
	Shared   int      `json:"shared"` // fingerprints in common
	// Score is the larger of the two shares: copying into a longer file
	// still scores high.
	Score float64 `json:"score"`
}

// PairSide is one learner's part of a pair.
type PairSide struct {
	Learner      int64   `json:"learner"`
	Name         string  `json:"name"`
	Submission   int64   `json:"submission"`
	Fingerprints int     `json:"fingerprints"`
	Share        float64 `json:"share"` // of this side's fingerprints that the other has
}

// Fingerprint is one winnowed k-gram hash and the lines it spans.
type Fingerprint struct {
	Hash            uint64
	FirstLine, Last int
}

type normToken struct {
	text string
	line int
}

// normalize scans Go source into tokens with identifiers and literals
// abstracted and comments and semicolons dropped, so renaming variables or
// reformatting changes nothing. It never fails: bad code is scanned as far
// as it goes.
func normalize(src []byte) []normToken {
	fset := token.NewFileSet()
	f := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(f, src, func(token.Position, string) {}, 0)
	var out []normToken
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return out
		}
		var text string
		switch {
		case tok == token.SEMICOLON, tok == token.COMMENT:
			continue
		case tok == token.IDENT:
			text = "id"
		case tok.IsLiteral():
			text = "lit"
		default:
			text = tok.String()
		}
		out = append(out, normToken{text, f.Line(pos)})
	}
}

// Fingerprints winnows the hashes of src's normalised k-grams: from each
// window of consecutive hashes it keeps the smallest (the rightmost on a
// tie), each position once.
func Fingerprints(src []byte) []Fingerprint {
	toks := normalize(src)
	if len(toks) < kgramTokens {
		return nil
	}
	hashes := make([]uint64, len(toks)-kgramTokens+1)
	for i := range hashes {
		h := fnv.New64a()
		for _, t := range toks[i : i+kgramTokens] {
			h.Write([]byte(t.text))
			h.Write([]byte{0})
		}
		hashes[i] = h.Sum64()
	}
	w := min(window, len(hashes))
	var out []Fingerprint
	last := -1
	for start := 0; start+w <= len(hashes); start++ {
		m := start
		for i := start; i < start+w; i++ {
			if hashes[i] <= hashes[m] {
				m = i
			}
		}
		if m != last {
			last = m
			out = append(out, Fingerprint{hashes[m], toks[m].line, toks[m+kgramTokens-1].line})
		}
	}
	return out
}

// SharedLines returns, for code a and b, the lines covered by fingerprints
// they share (starter fingerprints excluded), for a side-by-side view.
func SharedLines(a, b, starter []byte) (la, lb map[int]bool) {
	skip := hashSet(Fingerprints(starter))
	fa, fb := Fingerprints(a), Fingerprints(b)
	ha, hb := hashSet(fa), hashSet(fb)
	mark := func(fs []Fingerprint, other map[uint64]bool) map[int]bool {
		lines := map[int]bool{}
		for _, f := range fs {
			if other[f.Hash] && !skip[f.Hash] {
				for l := f.FirstLine; l <= f.Last; l++ {
					lines[l] = true
				}
			}
		}
		return lines
	}
	return mark(fa, hb), mark(fb, ha)
}

func hashSet(fs []Fingerprint) map[uint64]bool {
	m := make(map[uint64]bool, len(fs))
	for _, f := range fs {
		m[f.Hash] = true
	}
	return m
}

type candidate struct {
	learner *records.Learner
	sub     *records.Submission
	hashes  map[uint64]bool
}

// sameText says whether a and b differ at most in white space.
func sameText(a, b []byte) bool {
	fa, fb := bytes.Fields(a), bytes.Fields(b)
	return len(fa) == len(fb) && len(fa) > 0 && slices.EqualFunc(fa, fb, bytes.Equal)
}

// referenceMatches compares each candidate with the reference solution;
// it runs before the class's common fingerprints are dropped.
func referenceMatches(col ExerciseInfo, cands []*candidate, skip map[uint64]bool, threshold float64) []*ReferenceMatch {
	if len(col.solution) == 0 {
		return nil
	}
	ref := map[uint64]bool{}
	for _, f := range Fingerprints(col.solution) {
		if !skip[f.Hash] {
			ref[f.Hash] = true
		}
	}
	var out []*ReferenceMatch
	for _, c := range cands {
		identical := sameText([]byte(c.sub.Code), col.solution)
		shared := 0
		for h := range c.hashes {
			if ref[h] {
				shared++
			}
		}
		sa, sb := ratio(shared, len(c.hashes)), ratio(shared, len(ref))
		score := max(sa, sb)
		if !identical && (shared < minShared || score < threshold) {
			continue
		}
		out = append(out, &ReferenceMatch{Exercise: col.Slug, Learner: c.learner.ID, Name: c.learner.Name, Submission: c.sub.ID,
			Fingerprints: len(c.hashes), Shared: shared, Share: sa, Coverage: sb, Score: score, Identical: identical})
	}
	return out
}

func similarity(in *Input, cols []ExerciseInfo, threshold float64) Similarity {
	sim := Similarity{Threshold: threshold, Pairs: []*Pair{}, Reference: []*ReferenceMatch{}}
	learners := map[int64]*records.Learner{}
	for _, l := range in.Learners {
		learners[l.ID] = l
	}
	for _, col := range cols {
		// Each learner's latest own submit.
		latest := map[int64]*records.Submission{}
		for _, s := range in.Submissions {
			if s.Exercise == col.Slug && s.Charged() && s.Mode == verdict.ModeSubmit && learners[s.LearnerID] != nil {
				latest[s.LearnerID] = s
			}
		}
		skip := hashSet(Fingerprints(col.starter))
		var cands []*candidate
		holders := map[uint64]int{}
		for id, s := range latest {
			c := &candidate{learner: learners[id], sub: s, hashes: map[uint64]bool{}}
			for _, f := range Fingerprints([]byte(s.Code)) {
				if !skip[f.Hash] && !c.hashes[f.Hash] {
					c.hashes[f.Hash] = true
					holders[f.Hash]++
				}
			}
			cands = append(cands, c)
		}
		slices.SortFunc(cands, func(a, b *candidate) int { return cmp.Compare(a.learner.ID, b.learner.ID) })
		sim.Reference = append(sim.Reference, referenceMatches(col, cands, skip, threshold)...)
		if len(cands) >= commonMinLearners {
			for h, n := range holders {
				if float64(n) > commonShare*float64(len(cands)) {
					for _, c := range cands {
						delete(c.hashes, h)
					}
				}
			}
		}
		for i, a := range cands {
			for _, b := range cands[i+1:] {
				shared := 0
				for h := range a.hashes {
					if b.hashes[h] {
						shared++
					}
				}
				if shared < minShared {
					continue
				}
				sa, sb := ratio(shared, len(a.hashes)), ratio(shared, len(b.hashes))
				score := max(sa, sb)
				if score < threshold {
					continue
				}
				sim.Pairs = append(sim.Pairs, &Pair{Exercise: col.Slug, Shared: shared, Score: score,
					A: PairSide{a.learner.ID, a.learner.Name, a.sub.ID, len(a.hashes), sa},
					B: PairSide{b.learner.ID, b.learner.Name, b.sub.ID, len(b.hashes), sb}})
			}
		}
	}
	slices.SortStableFunc(sim.Reference, func(a, b *ReferenceMatch) int {
		return cmp.Or(-boolInt(a.Identical)+boolInt(b.Identical), cmp.Compare(b.Score, a.Score),
			strings.Compare(a.Exercise, b.Exercise), cmp.Compare(a.Learner, b.Learner))
	})
	slices.SortStableFunc(sim.Pairs, func(a, b *Pair) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Shared, a.Shared),
			strings.Compare(a.Exercise, b.Exercise), cmp.Compare(a.A.Learner, b.A.Learner), cmp.Compare(a.B.Learner, b.B.Learner))
	})
	return sim
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
