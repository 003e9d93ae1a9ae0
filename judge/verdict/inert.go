package verdict

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Inert returns s with every character that could act on whoever reads
// it written as a visible escape: control characters other than newline
// and tab (\x1b, \x07, \x0d, DEL as \x7f), the C1 controls U+0080–U+009F
// (\u009b), the bidirectional embeddings, overrides and isolates that can
// make text read in another order than it runs (\u202e, \u2066), and
// bytes that are not UTF-8 (\xff).
//
// Much of what a verdict says comes from the learner's code: panic
// values, its output, the names of the objects it wrote. Whatever shows
// a verdict (a terminal, a page, a report) passes such text through
// Inert, so a submission cannot clear an instructor's screen, retitle
// the window, write to the clipboard or disguise a line. Verdicts
// themselves keep the text as it was: records stored before this existed
// are shown safely too, and JSON already escapes what it must.
//
// Text without such characters comes back unchanged, the same string.
func Inert(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if actsOnReader(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !actsOnReader(r, n):
			b.WriteString(s[i : i+n])
		case r < utf8.RuneSelf || n == 1:
			// An ASCII control, or a byte that is not UTF-8.
			b.WriteString(`\x`)
			writeHex(&b, uint32(s[i]), 2)
		default:
			b.WriteString(`\u`)
			writeHex(&b, uint32(r), 4)
		}
		i += n
	}
	return b.String()
}

// actsOnReader says whether the rune r, n bytes long, is one Inert
// escapes.
func actsOnReader(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true // not UTF-8: some terminals read a lone 0x9b as CSI
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		// The characters go vet's bidichk reports (Trojan Source).
		return true
	}
	return false
}

func writeHex(b *strings.Builder, v uint32, digits int) {
	h := strconv.FormatUint(uint64(v), 16)
	for range digits - len(h) {
		b.WriteByte('0')
	}
	b.WriteString(h)
}
