package main

import (
	"ctrljudge/judge/exercise"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// statementDoc is an exercise's statement as markdown: the title, the
// statement from problem.md (never the explanation or the solution), and
// how to test. judge start writes it as the workspace's README.md.
func statementDoc(ex *exercise.Exercise) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %d. %s\n\n", ex.Number, ex.Title)
	fmt.Fprintf(&b, "*%s · %s*\n\n", ex.Difficulty, strings.Join(ex.Tags, ", "))
	b.WriteString(strings.TrimSpace(ex.Statement))
	fmt.Fprintf(&b, "\n\n## Testing your code\n\n"+
		"Your code goes in `%s`. In its folder:\n\n"+
		"    judge test %s --run      the sample tests\n"+
		"    judge test %s            every test, faults included\n"+
		"    judge test %s --list     the tests' names, and which faults each injects\n\n"+
		"A failure prints a replay command that runs just that test again.\n",
		ex.FileName(), ex.ID(), ex.ID(), ex.ID())
	return b.String()
}

// cmdShow prints an exercise's statement, wrapped to a terminal's width.
func cmdShow(args []string) int {
	fs, dir := newFlags("show")
	ex, _, code := findExercise(fs, dir, args, 1, "show ID")
	if ex == nil {
		return code
	}
	width := 0
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
		width = min(w, 100)
	}
	fmt.Print(renderMarkdown(statementDoc(ex), width))
	return 0
}

// listMarker is what begins a list item or a quote: its continuation
// lines are indented by as much.
var listMarker = regexp.MustCompile(`^\s*(?:[-*+] |\d+[.)] |> )?`)

// renderMarkdown makes markdown easier to read in a terminal: paragraphs
// and list items wrapped to width (0: not wrapped), headings in bold when
// colour is on. Code blocks and tables stay as they are.
func renderMarkdown(md string, width int) string {
	var b strings.Builder
	fence := false
	for _, line := range strings.Split(strings.TrimRight(md, "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fence = !fence
			b.WriteString(line)
		case fence, trimmed == "", strings.HasPrefix(trimmed, "|"), strings.HasPrefix(line, "    "):
			b.WriteString(line)
		case strings.HasPrefix(trimmed, "#"):
			b.WriteString(bold(line))
		default:
			prefix := listMarker.FindString(line)
			indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
			if strings.HasSuffix(prefix, "> ") {
				indent = prefix
			}
			b.WriteString(prefix + wrapWords(line[len(prefix):], width-len(indent), "\n"+indent))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// wrapWords breaks s between words so that lines stay within width
// characters where the words allow; sep begins each new line.
func wrapWords(s string, width int, sep string) string {
	if width < 20 {
		return s
	}
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := utf8.RuneCountInString(w)
		if i > 0 {
			if n+1+l > width {
				b.WriteString(sep)
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
