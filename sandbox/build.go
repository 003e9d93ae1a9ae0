package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	// maxBuildTime bounds a learner's build; maxWarmTime the first build
	// on a machine, which compiles the wasip1 standard library (~10 s).
	maxBuildTime   = 10 * time.Second
	maxWarmTime    = 5 * time.Minute
	maxSourceBytes = 64 << 10
	maxModuleBytes = 16 << 20
)

// Program is a Go module to build: trusted support files plus one
// untrusted file, the learner's.
type Program struct {
	// Files are the trusted files by slash path inside the module
	// (go.mod, glue, libraries). Paths are ours, never the learner's.
	Files map[string][]byte
	// Main is the untrusted source, placed at MainPath.
	Main     []byte
	MainPath string
	// MainName is how diagnostics name the untrusted file.
	MainName string
	// Package is the package to build, e.g. "./solution".
	Package string
	// Allowed lists the non-standard import paths Main may use.
	Allowed []string
}

// Diagnostic is one compiler message.
type Diagnostic struct {
	File    string // MainName for the untrusted file, else the module path
	Line    int
	Column  int
	Message string
}

func (d Diagnostic) String() string {
	s := d.File + ":" + strconv.Itoa(d.Line)
	if d.Column > 0 {
		s += ":" + strconv.Itoa(d.Column)
	}
	return s + ": " + d.Message
}

// BuildError is a build that failed because of the program: a compile
// error, a refused import, a source too large, a build past its deadline.
type BuildError struct {
	Diagnostics []Diagnostic
	Message     string // when no diagnostic applies
}

func (e *BuildError) Error() string {
	if len(e.Diagnostics) == 0 {
		return e.Message
	}
	var b strings.Builder
	for i, d := range e.Diagnostics {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// Builder runs the Go toolchain. Its zero value is not usable; see NewBuilder.
type Builder struct {
	goBin string
	env   []string
}

// NewBuilder finds the installed Go toolchain and its build cache.
func NewBuilder() (*Builder, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if _, err2 := os.Stat("/usr/local/go/bin/go"); err2 == nil {
			goBin = "/usr/local/go/bin/go"
		} else {
			return nil, fmt.Errorf("the Go toolchain is not installed or not on PATH: %w", err)
		}
	}
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, errors.New("go env: unexpected output")
	}
	env := []string{
		"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0",
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off",
		"GOENV=off", "GOSUMDB=off", "GOTELEMETRY=off",
		"GOCACHE=" + lines[0], "GOROOT=" + lines[1],
		"PATH=" + filepath.Dir(goBin),
	}
	return &Builder{goBin: goBin, env: env}, nil
}

// GoVersion returns the toolchain's version line.
func (b *Builder) GoVersion() (string, error) {
	out, err := exec.Command(b.goBin, "version").Output()
	return strings.TrimSpace(string(out)), err
}

// Warm builds a trusted program with a generous deadline, so the build
// cache holds the standard library before any untrusted build is timed.
func (b *Builder) Warm(ctx context.Context, p Program) error {
	_, err := b.build(ctx, p, maxWarmTime)
	return err
}

// Build compiles p to a wasm reactor module. A problem with the program is
// a *BuildError; any other error is the host's.
func (b *Builder) Build(ctx context.Context, p Program) ([]byte, error) {
	return b.build(ctx, p, maxBuildTime)
}

func (b *Builder) build(ctx context.Context, p Program, limit time.Duration) ([]byte, error) {
	if len(p.Main) > maxSourceBytes {
		return nil, &BuildError{Message: fmt.Sprintf("%s is %d KiB; the limit is %d KiB", p.MainName, len(p.Main)>>10, maxSourceBytes>>10)}
	}
	if err := vetSource(p); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "ctrljudge-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The module lives one level down: the go command ignores a go.mod in
	// the temporary directory's root, which TMPDIR below makes tmp.
	dir := filepath.Join(tmp, "m")
	src, support, err := meter(p.Main, p.MainName)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{p.MainPath: src}
	if support != nil {
		files[path.Join(path.Dir(p.MainPath), fuelFile)] = support
	}
	for name, data := range p.Files {
		files[name] = data
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		// Paths come from the judge, never the learner; check anyway so a
		// bad one can't escape the temporary folder.
		if !validRelPath(name) {
			return nil, fmt.Errorf("sandbox: bad module path %q", name)
		}
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, files[name], 0o644); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(tmp, "module.wasm")
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.goBin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, p.Package)
	cmd.Dir = dir
	cmd.Env = append(b.env, "HOME="+tmp, "GOPATH="+filepath.Join(tmp, "gopath"), "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &BuildError{Message: fmt.Sprintf("the build took longer than %v", limit)}
		}
		if _, ok := err.(*exec.ExitError); !ok {
			return nil, fmt.Errorf("sandbox: running go build: %w", err)
		}
		diags := parseDiagnostics(stderr.String(), dir, p)
		if len(diags) == 0 {
			return nil, fmt.Errorf("sandbox: go build failed: %s", strings.ReplaceAll(stderr.String(), tmp, "."))
		}
		return nil, &BuildError{Diagnostics: diags}
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	if len(wasm) > maxModuleBytes {
		return nil, &BuildError{Message: "the compiled module is too large"}
	}
	return wasm, nil
}

func validRelPath(p string) bool {
	return p != "" && path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../") && !strings.Contains(p, `\`)
}

var directiveRE = regexp.MustCompile(`(?m)^[ \t]*//(?:go:(embed|linkname|wasmimport|wasmexport|build|cgo_\w+)\b|\s*(\+build)\s)`)

// vetSource refuses what the build must never see: imports outside the
// standard library and the allowed list, cgo, and directives that reach
// past the language (embedding files, linking to runtime internals,
// declaring host imports).
func vetSource(p Program) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p.MainName, p.Main, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return &BuildError{Diagnostics: scanErrors(err)}
	}
	var diags []Diagnostic
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		pos := fset.Position(imp.Path.Pos())
		switch {
		case ip == "C":
			diags = append(diags, Diagnostic{p.MainName, pos.Line, pos.Column, `import "C" (cgo) is not allowed`})
		case isStd(ip):
		case contains(p.Allowed, ip):
		default:
			diags = append(diags, Diagnostic{p.MainName, pos.Line, pos.Column,
				fmt.Sprintf("import %q is not allowed: use the standard library and %s", ip, strings.Join(p.Allowed, ", "))})
		}
	}
	for _, m := range directiveRE.FindAllSubmatchIndex(p.Main, -1) {
		line := 1 + bytes.Count(p.Main[:m[0]], []byte("\n"))
		name := "//go:build"
		if m[2] >= 0 {
			name = "//go:" + string(p.Main[m[2]:m[3]])
		}
		diags = append(diags, Diagnostic{p.MainName, line, 1, name + " directives are not allowed"})
	}
	if len(diags) > 0 {
		return &BuildError{Diagnostics: diags}
	}
	return nil
}

func scanErrors(err error) []Diagnostic {
	var out []Diagnostic
	for _, line := range strings.Split(err.Error(), "\n") {
		if d, ok := parseLine(line); ok {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = append(out, Diagnostic{Message: err.Error()})
	}
	return out
}

func isStd(ip string) bool {
	first, _, _ := strings.Cut(ip, "/")
	return !strings.Contains(first, ".") && first != "ctrljudge" && first != "internal" && !strings.Contains(ip, "/internal/") && !strings.HasSuffix(ip, "/internal")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var diagRE = regexp.MustCompile(`^(.+?\.go):(\d+)(?::(\d+))?: (.*)$`)

func parseLine(line string) (Diagnostic, bool) {
	m := diagRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return Diagnostic{}, false
	}
	ln, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	return Diagnostic{File: m[1], Line: ln, Column: col, Message: m[4]}, true
}

// parseDiagnostics turns go build's output into diagnostics, naming the
// untrusted file by MainName and other files by their module path, with
// the temporary folder stripped.
func parseDiagnostics(out, dir string, p Program) []Diagnostic {
	var diags []Diagnostic
	mainDir := path.Dir(p.MainPath)
	for _, line := range strings.Split(out, "\n") {
		line = strings.ReplaceAll(line, dir+string(filepath.Separator), "")
		d, ok := parseLine(line)
		if !ok {
			continue
		}
		f := filepath.ToSlash(strings.TrimPrefix(d.File, "./"))
		switch {
		case f == p.MainPath || path.Join(mainDir, f) == p.MainPath:
			d.File = p.MainName
		case !strings.Contains(f, "/") && mainDir != ".":
			d.File = path.Join(mainDir, f)
		default:
			d.File = f
		}
		diags = append(diags, d)
	}
	return diags
}
