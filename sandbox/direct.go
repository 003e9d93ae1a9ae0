package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Direct builds. A learner's build is one small package main on top of
// packages that never change between builds (the standard library, the
// SDK). The go command spends most of a warm build on its own work —
// loading the module graph, planning actions, hashing and looking up
// every dependency in its cache — around one compile and one link. So
// the dependencies are compiled once by the go command itself (go list
// -export, with the flags of a learner's build), and their archives in
// the Go build cache are remembered in a kit: an import configuration
// kept per Go toolchain and set of trusted files, on disk when the
// Builder has a StateDir. A learner's build then runs the compiler and
// the linker directly, each in a process group of its own under the
// kernel limits of a build. Figures: RATIONALE.md, "Why run the compiler
// and the linker directly?".

// kitStaleAfter is how old an archive's modification time may get before
// a build marks it used, as the go command does, so that the Go cache's
// trimming (entries unused for five days) leaves the kit's archives alone.
const kitStaleAfter = 24 * time.Hour

// kit is the compiled dependencies of one set of trusted files.
type kit struct {
	key  string
	file string // where it is kept ("" in memory only)

	mu      sync.Mutex
	pkgs    map[string]string // import path → compiled archive
	missing map[string]string // import path → why it cannot be imported
	checked bool              // archives exist (checked since loaded)
}

// direct reports whether p can be built by the compiler and linker
// directly: the package built is the untrusted file's, whose trusted
// files are all Go files for wasip1. Otherwise the go command builds it.
func (b *Builder) directOK(p Program) bool {
	if b.toolDir == "" || !mainPackage(p) {
		return false
	}
	dir := path.Dir(p.MainPath)
	for name := range p.Files {
		if path.Dir(name) == dir && name != "go.mod" && name != "go.sum" && !strings.HasSuffix(name, ".go") {
			return false
		}
	}
	return true
}

// mainFiles are the Go files of the package built, the untrusted one's
// (already metered) included, that build for wasip1.
func mainFiles(p Program, files map[string][]byte) []string {
	dir := path.Dir(p.MainPath)
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "wasip1", "wasm", false
	var names []string
	for name, data := range files {
		if path.Dir(name) != dir || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		ctx.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		if ok, err := ctx.MatchFile(".", path.Base(name)); err == nil && ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// importAt is one import of a file, and where it stands.
type importAt struct {
	path      string
	line, col int
}

// fileImports lists a Go file's imports with their positions.
func fileImports(name string, src []byte) []importAt {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []importAt
	for _, s := range f.Imports {
		ip, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue
		}
		pos := fset.Position(s.Path.Pos())
		out = append(out, importAt{ip, pos.Line, pos.Column})
	}
	return out
}

// kitKey names the kit of p's trusted files under this toolchain.
func (b *Builder) kitKey(p Program) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q\n", b.goVersion, b.goroot, b.gocache, b.toolDir, buildFlags)
	names := make([]string, 0, len(p.Files))
	for n := range p.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	dir := path.Dir(p.MainPath)
	for _, n := range names {
		if path.Dir(n) == dir && n != "go.mod" {
			continue // compiled with the learner's file, not part of the kit
		}
		fmt.Fprintf(h, "%q %d\n", n, len(p.Files[n]))
		h.Write(p.Files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// kitFor returns the kit of p's trusted files, loading it from StateDir
// when it was prepared by an earlier process.
func (b *Builder) kitFor(p Program) *kit {
	key := b.kitKey(p)
	b.kitMu.Lock()
	defer b.kitMu.Unlock()
	if k, ok := b.kits[key]; ok {
		return k
	}
	k := &kit{key: key, pkgs: map[string]string{}, missing: map[string]string{}}
	if b.StateDir != "" {
		k.file = filepath.Join(b.StateDir, "kit-"+key+".importcfg")
		if data, err := os.ReadFile(k.file); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
				if ip, file, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "packagefile "), "="); ok && strings.HasPrefix(sc.Text(), "packagefile ") {
					k.pkgs[ip] = file
				}
			}
		}
	}
	if b.kits == nil {
		b.kits = map[string]*kit{}
	}
	b.kits[key] = k
	return k
}

// ensure makes sure the kit holds every package of imports and its
// dependencies, compiling what is missing with the go command (trusted
// code only: the standard library and p's trusted files; the learner's
// file is never in the module it runs in). It returns, for each import
// the kit cannot provide, why.
func (b *Builder) ensure(ctx context.Context, k *kit, p Program, imports []string) (map[string]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.checked && len(k.pkgs) > 0 {
		// Archives the Go cache has trimmed since the kit was written are
		// compiled again; the others are marked used.
		now := time.Now()
		for _, file := range k.pkgs {
			fi, err := os.Stat(file)
			if err != nil {
				k.pkgs = map[string]string{}
				break
			}
			if now.Sub(fi.ModTime()) > kitStaleAfter {
				os.Chtimes(file, now, now)
			}
		}
		k.checked = true
	}
	var need []string
	why := map[string]string{}
	for _, ip := range imports {
		if _, ok := k.pkgs[ip]; ok || ip == "unsafe" {
			continue
		}
		if msg, ok := k.missing[ip]; ok {
			why[ip] = msg
			continue
		}
		need = append(need, ip)
	}
	if len(need) == 0 {
		return why, nil
	}
	sort.Strings(need)
	if err := b.listExports(ctx, k, p, need); err != nil {
		return nil, err
	}
	for _, ip := range need {
		if _, ok := k.pkgs[ip]; !ok {
			if k.missing[ip] == "" {
				k.missing[ip] = "package " + ip + " cannot be built for wasip1"
			}
			why[ip] = k.missing[ip]
		}
	}
	k.checked = true
	if k.file != "" {
		k.save()
	}
	return why, nil
}

// listExports runs go list -export on pkgs and their dependencies, in a
// module of p's trusted files, and adds what it compiled to the kit.
func (b *Builder) listExports(ctx context.Context, k *kit, p Program, pkgs []string) error {
	tmp, err := tempDir("", "kit")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "m")
	mainDir := path.Dir(p.MainPath)
	for name, data := range p.Files {
		if !validRelPath(name) {
			return fmt.Errorf("sandbox: bad module path %q", name)
		}
		if path.Dir(name) == mainDir && strings.HasSuffix(name, ".go") {
			continue // the package built: compiled with the learner's file
		}
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const sep = "\x1f"
	args := append(append([]string{"list", "-e", "-export", "-deps"}, buildFlags...),
		"-f", "{{.ImportPath}}"+sep+"{{.Export}}"+sep+"{{with .Error}}{{.Err}}{{end}}")
	args = append(args, pkgs...)
	var out bytes.Buffer
	r := b.runTool(ctx, dir, tmp, b.goBin, args, trustedLimits, nil, &out, nil)
	var busy *BusyError
	if errors.As(r.err, &busy) || r.err != nil && ctx.Err() != nil {
		return r.err // the machine's or the caller's, not a broken toolchain
	}
	if r.err != nil {
		return fmt.Errorf("sandbox: preparing the build of %s: %v: %s", strings.Join(pkgs, " "), r.err, firstLines(strings.ReplaceAll(r.stderr, tmp, "."), 20))
	}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Split(line, sep)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[1] != "":
			k.pkgs[f[0]] = f[1]
			delete(k.missing, f[0])
		case f[0] != "unsafe" && f[2] != "":
			msg := f[2]
			if i := strings.Index(msg, " ("+b.goroot); i >= 0 {
				msg = msg[:i] // the host's folders are none of the learner's business
			}
			k.missing[f[0]] = strings.ReplaceAll(msg, b.goroot, "$GOROOT")
		}
	}
	return nil
}

// save writes the kit where the next process finds it.
func (k *kit) save() {
	ips := make([]string, 0, len(k.pkgs))
	for ip := range k.pkgs {
		ips = append(ips, ip)
	}
	sort.Strings(ips)
	var buf bytes.Buffer
	buf.WriteString("# import config: compiled dependencies of learners' builds\n")
	for _, ip := range ips {
		buf.WriteString("packagefile " + ip + "=" + k.pkgs[ip] + "\n")
	}
	if os.MkdirAll(filepath.Dir(k.file), 0o700) != nil {
		return
	}
	tmp := k.file + ".tmp" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, buf.Bytes(), 0o600) == nil {
		os.Rename(tmp, k.file)
	}
}

// importcfg writes an import configuration naming the kit's archives for
// imports (compile) or for every package (link).
func (k *kit) importcfg(file string, imports []string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	var buf bytes.Buffer
	buf.WriteString("# import config\n")
	if imports == nil {
		for ip := range k.pkgs {
			imports = append(imports, ip)
		}
		sort.Strings(imports)
	}
	for _, ip := range imports {
		if f, ok := k.pkgs[ip]; ok {
			buf.WriteString("packagefile " + ip + "=" + f + "\n")
		}
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// Prepare compiles, once per Go toolchain and set of trusted files, what
// every build of p's untrusted file needs besides that file: p's trusted
// packages and their dependencies, and the packages p's own files in the
// built package import. It has no kernel limits, only the wall-clock net
// of a trusted build. Build calls it too; a server calls it at start so
// that the first learner's build does not pay for it.
func (b *Builder) Prepare(ctx context.Context, p Program) error {
	if !b.directOK(p) {
		return nil
	}
	files := map[string][]byte{}
	for n, d := range p.Files {
		files[n] = d
	}
	_, err := b.ensure(ctx, b.kitFor(p), p, trustedImports(p, files, mainFiles(p, files)))
	return err
}

// trustedImports are the imports of the trusted files of the package
// built (names, its files: mainFiles), plus what every link needs.
func trustedImports(p Program, files map[string][]byte, names []string) []string {
	seen := map[string]bool{"runtime": true}
	for _, name := range names {
		if name == p.MainPath {
			continue
		}
		for _, imp := range fileImports(name, files[name]) {
			seen[imp.path] = true
		}
	}
	out := make([]string, 0, len(seen))
	for ip := range seen {
		out = append(out, ip)
	}
	sort.Strings(out)
	return out
}

// buildDirect compiles and links p's package main, names (mainFiles) of
// files (the learner's file metered, the support file, the trusted
// files), written under dir. It returns the module's path, or the
// program's *BuildError.
func (b *Builder) buildDirect(ctx context.Context, p Program, files map[string][]byte, names []string, dir, tmp string, lim BuildLimits, res *buildResult) (string, error) {
	k := b.kitFor(p)
	if !slices.Contains(names, p.MainPath) {
		return "", fmt.Errorf("sandbox: %s would not be compiled for wasip1", p.MainPath)
	}
	var imports []string
	seen := map[string]bool{}
	var learner []importAt
	for _, name := range names {
		imps := fileImports(name, files[name])
		if name == p.MainPath {
			learner = imps
		}
		for _, imp := range imps {
			if !seen[imp.path] {
				seen[imp.path] = true
				imports = append(imports, imp.path)
			}
		}
	}
	why, err := b.ensure(ctx, k, p, append(imports, trustedImports(p, files, names)...))
	if err != nil {
		return "", err
	}
	if len(why) > 0 {
		var diags []Diagnostic
		for _, imp := range learner {
			if msg, ok := why[imp.path]; ok {
				diags = append(diags, Diagnostic{p.MainName, imp.line, imp.col, msg})
			}
		}
		if len(diags) > 0 {
			return "", &BuildError{Diagnostics: diags}
		}
		return "", fmt.Errorf("sandbox: the judge's own files import what cannot be built: %v", why)
	}
	if !b.noSourceLimits {
		if diags := checkSource(p, otherGoFiles(p, names), k.lookup); diags != nil {
			return "", &BuildError{Diagnostics: diags}
		}
	}
	compileCfg := filepath.Join(tmp, "importcfg")
	linkCfg := filepath.Join(tmp, "importcfg.link")
	if err := k.importcfg(compileCfg, imports); err != nil {
		return "", err
	}
	if err := k.importcfg(linkCfg, nil); err != nil {
		return "", err
	}
	pkgDir := filepath.Join(dir, filepath.FromSlash(path.Dir(p.MainPath)))
	trimTo := modulePath(p.Files["go.mod"])
	if d := path.Dir(p.MainPath); d != "." {
		trimTo = path.Join(trimTo, d)
	}
	archive := filepath.Join(tmp, "_pkg_.a")
	args := []string{"-o", archive, "-trimpath", pkgDir + "=>" + trimTo + ";" + tmp + "=>", "-p", "main"}
	if v := goLine(p.Files["go.mod"]); v != "" {
		args = append(args, "-lang=go"+v)
	}
	args = append(args, "-complete", "-dwarf=false", "-goversion", b.goVersion, "-nolocalimports", "-importcfg", compileCfg, "-pack")
	// Absolute names, as the go command passes them: -trimpath rewrites
	// them to workspace/…, and the meter's line directives, which inherit
	// the name, with them.
	for _, name := range names {
		args = append(args, filepath.Join(dir, filepath.FromSlash(name)))
	}
	if r := b.step(ctx, pkgDir, tmp, filepath.Join(b.toolDir, "compile"), args, lim, res, b.compileEnv); r.err != nil {
		return "", k.failed(b.stepError(r, lim, dir, tmp, p))
	}
	out := filepath.Join(tmp, "module.wasm")
	// As the go command does under -trimpath: no GOROOT in the module.
	// -w: no DWARF, which nothing reads (a trap is explained from the Go
	// runtime's own traceback). The name section stays: pruning reads it
	// (prune.go), and Compile strips it before wazero sees the module.
	args = []string{"-o", out, "-importcfg", linkCfg, "-buildmode=c-shared", "-w", archive}
	env := []string{"GOROOT="}
	if b.linkEnv != nil {
		env = append(env, b.linkEnv(lim)...)
	}
	if b.linkProcs != "" {
		env = append(env, "GOMAXPROCS="+b.linkProcs)
	}
	r := b.step(ctx, tmp, tmp, filepath.Join(b.toolDir, "link"), args, lim, res, env)
	if r.err != nil {
		return "", k.failed(b.stepError(r, lim, dir, tmp, p))
	}
	return out, nil
}

// recheck makes the next build check the kit's archives again: a tool
// failed for a reason not the program's, perhaps an archive the Go cache
// lost since this process checked.
func (k *kit) recheck() {
	k.mu.Lock()
	k.checked = false
	k.mu.Unlock()
}

// failed passes a build's error on, and has the kit checked again when
// the error is neither the program's nor the machine's.
func (k *kit) failed(err error) error {
	var be *BuildError
	var busy *BusyError
	if !errors.As(err, &be) && !errors.As(err, &busy) && !errors.Is(err, context.Canceled) {
		k.recheck()
	}
	return err
}

// linkGCEnv turns the linker's collector off until the process holds
// maxLinkHeapBytes, or a quarter of its memory limit if that is less. A
// learner's link allocates some 60 MB, nearly all of it live until it
// exits: at the default GOGC its collector runs cycle after cycle over a
// heap it cannot shrink, about a tenth of the link's CPU (RATIONALE.md,
// "Why the linker without its collector, on one P?"). A link that grows past the mark collects as a
// memory-limited program does; its input is bounded (an object file is
// at most maxBuildFileBytes). Not the compiler's: a compile bomb's heap
// is live too, and past the mark its collector would run flat out, so
// whether the CPU limit or the memory limit stopped it would depend on
// the machine's load.
func linkGCEnv(lim BuildLimits) []string {
	limit := int64(maxLinkHeapBytes)
	if lim.MemoryBytes > 0 {
		limit = min(limit, lim.MemoryBytes/4)
	}
	return []string{"GOGC=off", "GOMEMLIMIT=" + strconv.FormatInt(limit, 10)}
}

// compileGCEnv runs the compiler on one P. By default it compiles a
// package's functions on as many workers as there are Ps, and then
// starts with a heap goal of 128 MiB; for a learner's small package the
// second worker costs more CPU than it saves, and the other core is
// another build's or a judgement's. On one P (and so one worker) it
// would collect at the default GOGC, twice a learner's compile; at 400
// its first goal is 16 MiB and it does not collect at all. A compile bomb
// still collects, once each time its heap grows fivefold, and ends on the
// memory limit as before: never a memory-limited collector running flat
// out (linkGCEnv). And with no idle P to mark on, the CPU a compile takes,
// and so which limit stops a bomb, does not depend on whether the other
// cores are busy. RATIONALE.md, "Why the compiler on one P, at GOGC=400?".
var compileGCEnv = []string{"GOGC=400", "GOMAXPROCS=1"}

// step runs one tool of a direct build and adds its cost to res.
func (b *Builder) step(ctx context.Context, dir, tmp, bin string, args []string, lim BuildLimits, res *buildResult, env []string) runResult {
	r := b.runTool(ctx, dir, tmp, bin, args, lim, nil, nil, env)
	res.cpu += r.cpu
	res.maxRSS = max(res.maxRSS, r.maxRSS)
	return r
}

// stepError explains a compile or link that failed, as the go command's
// output would have been explained.
func (b *Builder) stepError(r runResult, lim BuildLimits, dir, tmp string, p Program) error {
	var ee *exec.ExitError
	if !errors.As(r.err, &ee) {
		return r.err
	}
	if err := limitError(r, lim); err != nil {
		return err
	}
	if diags := parseDiagnostics(r.stderr, dir, p); len(diags) > 0 {
		return &BuildError{Diagnostics: diags}
	}
	// The only untrusted package is the one built: what its compile or
	// link says without a position is under its header, as go build
	// prints it.
	ip := modulePath(p.Files["go.mod"])
	if pkg := path.Clean(strings.TrimPrefix(p.Package, "./")); pkg != "." {
		ip = path.Join(ip, pkg)
	}
	if msg := unplacedError("# "+ip+"\n"+r.stderr, p); msg != "" {
		return &BuildError{Message: "your program could not be built: " + msg}
	}
	return fmt.Errorf("sandbox: build failed: %s", firstLines(strings.ReplaceAll(r.stderr, tmp, "."), 20))
}

// otherGoFiles are the trusted Go files of the package built, as the
// judge gave them: names (mainFiles) when known, else every Go file in
// the untrusted file's folder.
func otherGoFiles(p Program, names []string) map[string][]byte {
	out := map[string][]byte{}
	dir := path.Dir(p.MainPath)
	for name, data := range p.Files {
		if name == p.MainPath || path.Dir(name) != dir || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if names == nil || slices.Contains(names, name) {
			out[name] = data
		}
	}
	return out
}

var goLineRE = regexp.MustCompile(`(?m)^go\s+(\d+\.\d+)(?:\.\d+)?\s*$`)

// goLine is the language version a go.mod declares ("1.26"), or "".
func goLine(gomod []byte) string {
	if m := goLineRE.FindSubmatch(gomod); m != nil {
		return string(m[1])
	}
	return ""
}
