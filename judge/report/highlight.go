package report

import (
	"go/scanner"
	"go/token"
	"strings"
)

// Span is a run of source text with one highlighting class ("" for plain).
// Text is raw: templates escape it.
type Span struct {
	Class string
	Text  string
}

// Line is one highlighted source line.
type Line struct {
	No    int
	Spans []Span
}

// Highlight splits Go source into lines of classed spans: kw (keywords),
// str, numlit, com (comments). Broken code is highlighted as far as the
// scanner gets; every byte of src appears in exactly one span.
func Highlight(src string) []Line {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	class := make([]string, len(src))
	fset := token.NewFileSet()
	f := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(f, []byte(src), func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		var c string
		n := len(lit)
		switch {
		case tok == token.COMMENT:
			c = "com"
		case tok == token.STRING || tok == token.CHAR:
			c = "str"
		case tok == token.INT || tok == token.FLOAT || tok == token.IMAG:
			c = "numlit"
		case tok.IsKeyword():
			c = "kw"
		default:
			continue
		}
		start := f.Offset(pos)
		for i := start; i < start+n && i < len(src); i++ {
			class[i] = c
		}
	}
	var lines []Line
	cur := Line{No: 1}
	flush := func(from, to int) {
		if from < to {
			cur.Spans = append(cur.Spans, Span{class[from], src[from:to]})
		}
	}
	runStart := 0
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			flush(runStart, i)
			lines = append(lines, cur)
			cur = Line{No: cur.No + 1}
			runStart = i + 1
			continue
		}
		if i > runStart && class[i] != class[i-1] {
			flush(runStart, i)
			runStart = i
		}
	}
	flush(runStart, len(src))
	if len(cur.Spans) > 0 || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// CodeLine is a highlighted line with a mark (shared with the other side
// of a pair, or changed in a diff).
type CodeLine struct {
	Line
	Mark bool
}

// MarkedCode highlights src and marks the given line numbers.
func MarkedCode(src string, marked map[int]bool) []CodeLine {
	hl := Highlight(src)
	out := make([]CodeLine, len(hl))
	for i, l := range hl {
		out[i] = CodeLine{l, marked[l.No]}
	}
	return out
}
