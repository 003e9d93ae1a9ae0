package verdict

import (
	"testing"
	"unicode/utf8"
)

func TestInertEscapesWhatActsOnTheReader(t *testing.T) {
	for in, want := range map[string]string{
		"": "",
		"plain words\n\tindented, ünïcødé ✓": "plain words\n\tindented, ünïcødé ✓",
		"\x1b[2J\x1b[H":                  `\x1b[2J\x1b[H`,
		"\x1b]0;title\a":                 `\x1b]0;title\x07`,
		"over\rwrite":                    `over\x0dwrite`,
		"del\x7f":                        `del\x7f`,
		"nul\x00":                        `nul\x00`,
		"c1 \u0085\u009b31m":             `c1 \u0085\u009b31m`,
		"\u202eevil\u202c \u2066x\u2069": `\u202eevil\u202c \u2066x\u2069`,
		"bad \xff\x9b utf-8":             `bad \xff\x9b utf-8`,
		"\u00a0\u200d\u2028 stay":        "\u00a0\u200d\u2028 stay",
		`\x1b as text stays as it is`:    `\x1b as text stays as it is`,
	} {
		if got := Inert(in); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInertLeavesNoControlCharacter(t *testing.T) {
	var all []byte
	for b := 0; b < 256; b++ {
		all = append(all, byte(b))
	}
	all = append(all, string([]rune{0x80, 0x9f, 0x202a, 0x202e, 0x2066, 0x2069})...)
	out := Inert(string(all))
	if !utf8.ValidString(out) {
		t.Fatalf("not UTF-8: %q", out)
	}
	for _, r := range out {
		if actsOnReader(r, utf8.RuneLen(r)) {
			t.Fatalf("%U left in %q", r, out)
		}
	}
}

// Ordinary text is the very same string: nothing is copied.
func TestInertKeepsOrdinaryTextAsItIs(t *testing.T) {
	s := "Your controller panicked: index out of range [3] with length 3\n    at main.Reconcile (my-file.go:11)"
	if n := testing.AllocsPerRun(100, func() { _ = Inert(s) }); n != 0 {
		t.Errorf("%v allocations for ordinary text", n)
	}
}
