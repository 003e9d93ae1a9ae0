package sandbox

import (
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// vetSource refuses what the build must never see: a file the Go parser
// rejects, a package other than the one being built, imports outside the
// standard library and the allowed list, cgo, and every compiler directive
// (//go:…, //line, /*line …*/, // +build).
//
// The whole file is parsed, and directives are found in the comments the
// scanner produced, not in lines of text: a "\r" or any other line-ending
// trick that hides a directive from a line-based filter cannot hide it
// from the scanner, which the compiler's follows. A file the parser
// rejects is never built, so no disagreement between go/parser and the
// compiler can let an unvetted (or unmetered) file through.
func vetSource(p Program) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p.MainName, p.Main, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return &BuildError{Diagnostics: syntaxErrors(err, p.MainName), syntax: true}
	}
	var diags []Diagnostic
	at := func(pos token.Pos, msg string) {
		ps := fset.Position(pos)
		diags = append(diags, Diagnostic{p.MainName, ps.Line, ps.Column, msg})
	}
	if mainPackage(p) && f.Name.Name != "main" {
		at(f.Name.Pos(), "your file must be package main, not package "+f.Name.Name)
	}
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		switch {
		case ip == "C":
			at(imp.Path.Pos(), `import "C" (cgo) is not allowed`)
		case ip == "unsafe":
			at(imp.Path.Pos(), `import "unsafe" is not allowed: a controller has no need to reach past Go's memory safety`)
		case isStd(ip):
		case contains(p.Allowed, ip):
		default:
			at(imp.Path.Pos(), fmt.Sprintf("import %q is not allowed: use the standard library and %s", ip, strings.Join(p.Allowed, ", ")))
		}
	}
	tf := fset.File(f.Pos())
	for _, g := range f.Comments {
		for _, c := range g.List {
			if name, ok := directive(rawComment(p.Main, tf.Offset(c.Pos()))); ok {
				at(c.Pos(), name+" directives are not allowed")
			}
		}
	}
	if len(diags) > 0 {
		return &BuildError{Diagnostics: diags}
	}
	return nil
}

// rawComment is the comment starting at off in src as written: go/ast
// keeps a comment's text with its carriage returns removed.
func rawComment(src []byte, off int) string {
	s := string(src[off:])
	if strings.HasPrefix(s, "/*") {
		if i := strings.Index(s, "*/"); i >= 0 {
			return s[:i+2]
		}
		return s
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// directive reports whether the comment c (as written) is, or hides, a
// compiler directive, and names it. The compiler recognises //go:name
// and //line only right after the slashes and /*line only right after
// the opening; any piece of the comment between line breaks (\n, \r)
// that starts so is refused too, which is stricter than the compiler by
// design.
func directive(c string) (string, bool) {
	pieces := strings.FieldsFunc(c, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, s := range pieces {
		if i > 0 {
			s = strings.TrimLeft(s, " \t")
		}
		switch {
		case strings.HasPrefix(s, "//go:"):
			name := s[2:]
			if j := strings.IndexAny(name, " \t"); j >= 0 {
				name = name[:j]
			}
			return "//" + name, true
		case strings.HasPrefix(s, "//line "), strings.HasPrefix(s, "/*line "):
			return s[:6], true
		case strings.HasPrefix(s, "// +build"), strings.HasPrefix(s, "//+build"):
			return "// +build", true
		}
	}
	return "", false
}

// mainPackage reports whether the untrusted file is in the package being
// built, which -buildmode=c-shared requires to be package main.
func mainPackage(p Program) bool {
	pkg := path.Clean(strings.TrimPrefix(p.Package, "./"))
	return p.Package != "" && path.Dir(p.MainPath) == pkg
}

// syntaxErrors turns the parser's errors into diagnostics worded like the
// compiler's ("syntax error: …").
func syntaxErrors(err error, name string) []Diagnostic {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return []Diagnostic{{File: name, Message: "syntax error: " + err.Error()}}
	}
	var out []Diagnostic
	for _, e := range list {
		msg := e.Msg
		if !strings.HasPrefix(msg, "syntax error") {
			msg = "syntax error: " + msg
		}
		out = append(out, Diagnostic{name, e.Pos.Line, e.Pos.Column, msg})
	}
	return out
}

func isStd(ip string) bool {
	first, _, _ := strings.Cut(ip, "/")
	// vendor/ and cmd/ are the toolchain's own, which go build refuses to
	// let a program import.
	return !strings.Contains(first, ".") && first != "ctrljudge" && first != "internal" && first != "vendor" && first != "cmd" && !strings.Contains(ip, "/internal/") && !strings.HasSuffix(ip, "/internal")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
