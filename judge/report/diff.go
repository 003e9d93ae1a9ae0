package report

import "strings"

// maxDiffCells bounds the line-matching table: larger inputs are shown as
// a plain replacement rather than spending seconds on a diff.
const maxDiffCells = 4_000_000

// DiffLine is one line of a line diff.
type DiffLine struct {
	Op       byte   `json:"op"` // ' ' same, '-' only in the old, '+' only in the new
	Text     string `json:"text"`
	Old, New int    `json:"-"` // 1-based line numbers, 0 where absent
}

// Diff compares two texts line by line (longest common subsequence after
// trimming the common head and tail).
func Diff(oldText, newText string) []DiffLine {
	a, b := splitLines(oldText), splitLines(newText)
	var out []DiffLine
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		out = append(out, DiffLine{' ', a[head], head + 1, head + 1})
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	out = append(out, diffMiddle(ma, mb, head)...)
	for i := range tail {
		ia, ib := len(a)-tail+i, len(b)-tail+i
		out = append(out, DiffLine{' ', a[ia], ia + 1, ib + 1})
	}
	return out
}

func diffMiddle(a, b []string, off int) []DiffLine {
	var out []DiffLine
	if len(a)*len(b) > maxDiffCells {
		for i, s := range a {
			out = append(out, DiffLine{'-', s, off + i + 1, 0})
		}
		for j, s := range b {
			out = append(out, DiffLine{'+', s, 0, off + j + 1})
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, DiffLine{' ', a[i], off + i + 1, off + j + 1})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			out = append(out, DiffLine{'-', a[i], off + i + 1, 0})
			i++
		default:
			out = append(out, DiffLine{'+', b[j], 0, off + j + 1})
			j++
		}
	}
	return out
}

func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
