package hugeheap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// MainFile is a file of package main that runs Warm at start and needs
// nothing but the standard library: the Go linker is built with it.
func TestMainFile(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "init.go", MainFile(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name != "main" {
		t.Errorf("package %s, want main", f.Name.Name)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			t.Errorf("imports %s: the linker's module has only the standard library", p)
		}
	}
	warm, initCallsWarm := false, false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		switch fd.Name.Name {
		case "Warm":
			warm = true
		case "init":
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "Warm" {
						initCallsWarm = true
					}
				}
				return true
			})
		}
	}
	if !warm || !initCallsWarm {
		t.Errorf("MainFile defines Warm: %v; runs it at start: %v\n%s", warm, initCallsWarm, MainFile())
	}
}
