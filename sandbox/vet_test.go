package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// The scanner, not lines of text, decides what is a directive.
func TestDirectivesAreFoundWhateverTheLineEndings(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"package main\n\r//go:linkname x runtime.x\nvar x int\n", "learner.go:2:2: //go:linkname"},
		{"package main\r\n//go:wasmimport a b\r\nfunc f()\r\n", "learner.go:2:1: //go:wasmimport"},
		{"package main\r//go:wasmexport f\rfunc f() {}\r", "//go:wasmexport"},
		{"package main\n\n// a comment\r//go:embed x\nvar s string\n", "//go:embed"},
		{"package main\n\nfunc f() {\n\t//go:noinline\n}\n", "learner.go:4:2: //go:noinline"},
		{"package main\n\n/*line x.go:1*/\n", "/*line"},
		{"package main\n\n//line x.go:1\n", "//line"},
	} {
		err := vetSource(Program{Main: []byte(c.src), MainName: "learner.go"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
	for _, ok := range []string{
		"package main\n\n// go:embed is how files are embedded\n",
		"package main\n\n// See http://go:8080 and the line below.\n// line 5 of the spec\n",
		"package main\n\nvar s = \"//go:linkname x y\"\n",
	} {
		if err := vetSource(Program{Main: []byte(ok), MainName: "learner.go"}); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

// A file the parser rejects is never built; its errors read like the
// compiler's.
func TestSyntaxErrorsAreTheParsers(t *testing.T) {
	err := vetSource(Program{Main: []byte("package main\n\nfunc f() {\n"), MainName: "learner.go"})
	var be *BuildError
	if !errors.As(err, &be) || len(be.Diagnostics) == 0 || !strings.HasPrefix(be.Diagnostics[0].Message, "syntax error: ") || be.Diagnostics[0].Line != 3 {
		t.Fatalf("got %v", err)
	}
}
