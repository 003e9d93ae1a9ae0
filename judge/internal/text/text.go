package text

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on what a learner's code can make the judge keep. Every piece of
// learner-controlled text is clipped where it enters a verdict (an error a
// Reconcile returned, a panic, a name or value shown in a trace line), and
// the verdict as a whole has a budget; see judge/RATIONALE.md, "Why these
// bounds?".
const (
	// MaxMessageBytes bounds a test's message: a failure in a few
	// sentences, with room for a learner's error text and stack frames.
	MaxMessageBytes = 8 << 10
	// MaxErrorText bounds an error text a Reconcile returned, as the
	// message quotes it; maxTraceText as a trace line does.
	MaxErrorText = 2 << 10
	MaxTraceText = 256
	// MaxTraceEvent bounds one trace line as a whole.
	MaxTraceEvent = 512
	// maxShownValue bounds a name, label or data value quoted in an API
	// error or a write's description; valid names (253 bytes at most) are
	// shown whole.
	maxShownValue = 253
	// MaxDetail bounds a model's description of a written object.
	MaxDetail = 256
	// maxStackFrames bounds the learner's frames a panic's message lists.
	maxStackFrames = 20
	// MaxVerdictBytes is the budget of a verdict's JSON. The tests are
	// kept whole in order while they fit; past it, a test's trace,
	// timeline and output are left out, so the first failures stay
	// complete and the later ones are cut first.
	MaxVerdictBytes = 256 << 10
	// MaxTrafficBytes bounds the bytes of calls and replies between a
	// test's controller and the cluster. The reference solutions move
	// well under a MiB; the cap keeps the judge's own, unmetered work of
	// decoding, encoding and copying them to about a second.
	MaxTrafficBytes = 64 << 20
	// MaxReplyBytes bounds one reply, below the sandbox's 4 MiB per
	// message.
	MaxReplyBytes = 3<<20 + 512<<10
)

// Clip cuts s to its first max bytes, on a rune boundary, and adds a note
// of how much was cut. Short strings come back unchanged.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && i > max-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… (" + strconv.Itoa(len(s)-i) + " bytes cut)"
}

// JoinList joins items with ", " up to about max bytes, then says how
// many more there were, so a long write log never builds a long string.
func JoinList(items []string, max int) string {
	if len(items) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			if b.Len()+len(it) > max {
				b.WriteString(" and " + strconv.Itoa(len(items)-i) + " more")
				break
			}
			b.WriteString(", ")
		}
		b.WriteString(Clip(it, max))
	}
	return b.String()
}

// LearnerStack is a panic's message and the learner's frames, clipped.
func LearnerStack(msg string, frames []string) string {
	out := Clip(msg, MaxErrorText)
	for i, f := range frames {
		if i == maxStackFrames {
			out += "\n    … and " + strconv.Itoa(len(frames)-i) + " more frames"
			break
		}
		out += "\n" + Clip(f, maxShownValue)
	}
	return out
}

func Pods(n int) string {
	if n == 1 {
		return "1 Pod"
	}
	return strconv.Itoa(n) + " Pods"
}

func Itoa(n int32) string { return strconv.Itoa(int(n)) }

func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func ListOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Thousands writes n with thousands separators: 5,000,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// JoinNames is strings.Join for faults and other named strings.
func JoinNames[T ~string](xs []T, sep string) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(string(x))
	}
	return b.String()
}

func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// Shown is a kind, name or value as an error message quotes it: the
// learner chose it, so it is clipped.
func Shown(s string) string { return Clip(s, maxShownValue) }
