package judge

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// Mutation testing for authors: judge check --mutate generates small
// variants of an exercise's own solution.go and judges each. A variant that
// passes every test shows a behaviour the tests do not pin down, unless the
// author lists it as equivalent to the solution.

// Mutation operators, in the order they are tried at one place.
const (
	OpFlipComparison = "flip-comparison" // < and <=, > and >=, == and !=
	OpConstPlus      = "constant+1"
	OpConstMinus     = "constant-1"
	OpBoundPlus      = "bound+1" // the right side of an integer comparison
	OpBoundMinus     = "bound-1"
	OpDropCondition  = "drop-condition" // keep one side of && or ||
	OpNegateIf       = "negate-if"      // with an else, the same as swapping branches
	OpDropStatement  = "drop-statement"
	OpReturnEarly    = "return-early"
)

// GeneratedMutant is one variant of the solution.
type GeneratedMutant struct {
	Key  exercise.MutantKey
	Line int // 1-based, in solution.go
	Code []byte
	Diff string // unified, against solution.go
}

// Generated is what the operators made of one source file.
type Generated struct {
	Mutants   []GeneratedMutant // compile, in source order
	NoCompile []GeneratedMutant // rejected by the type checker
	Identical int               // same text as the solution or an earlier mutant
}

type edit struct {
	op         string
	start, end int // byte offsets replaced by text
	text       string
}

// GenerateMutants applies every operator at every place it fits in src (a
// learner-visible solution.go), in source order, and sorts the results
// into those that type-check and those that do not.
func GenerateMutants(src []byte) (*Generated, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "solution.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	tc := newTypeChecker(fset)
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}}
	pkg, err := tc.check(f, info)
	if err != nil {
		return nil, fmt.Errorf("solution.go does not type-check: %w", err)
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }

	var edits []edit
	add := func(op string, start, end int, s string) {
		edits = append(edits, edit{op, start, end, s})
	}
	isInt := func(e ast.Expr) bool {
		tv, ok := info.Types[e]
		if !ok || tv.Type == nil {
			return false
		}
		b, ok := tv.Type.Underlying().(*types.Basic)
		return ok && b.Info()&types.IsInteger != 0
	}
	flips := map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS,
		token.GTR: token.GEQ, token.GEQ: token.GTR, token.EQL: token.NEQ, token.NEQ: token.EQL}

	// dropStmts and returnEarly work on statement lists: blocks and the
	// bodies of case clauses. fn is the innermost enclosing function type.
	stmtList := func(list []ast.Stmt, fn *ast.FuncType) {
		if len(list) > 0 && fn != nil {
			// A switch body lists clauses, not statements; and a return
			// before the same return changes nothing.
			_, clause := list[0].(*ast.CaseClause)
			_, comm := list[0].(*ast.CommClause)
			if ret, ok := earlyReturn(fn, info, pkg); ok && !clause && !comm && text(list[0]) != ret {
				first := off(list[0].Pos())
				add(OpReturnEarly, first, first, ret+"\n"+indentAt(src, first))
			}
		}
		for _, s := range list {
			drop := false
			switch s := s.(type) {
			case *ast.ExprStmt, *ast.AssignStmt, *ast.IncDecStmt:
				drop = true
			case *ast.IfStmt:
				drop = s.Else == nil
			}
			if drop {
				start, end := wholeLines(src, off(s.Pos()), off(s.End()))
				add(OpDropStatement, start, end, "")
			}
		}
	}

	var stack []ast.Node
	enclosing := func() *ast.FuncType {
		for i := len(stack) - 1; i >= 0; i-- {
			switch n := stack[i].(type) {
			case *ast.FuncDecl:
				return n.Type
			case *ast.FuncLit:
				return n.Type
			}
		}
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		switch n := n.(type) {
		case *ast.GenDecl:
			if n.Tok == token.IMPORT {
				return false
			}
		case *ast.BinaryExpr:
			if to, ok := flips[n.Op]; ok {
				p := off(n.OpPos)
				add(OpFlipComparison, p, p+len(n.Op.String()), to.String())
				if _, lit := n.Y.(*ast.BasicLit); !lit && n.Op != token.EQL && n.Op != token.NEQ && isInt(n.Y) {
					y := text(n.Y)
					if _, simple := n.Y.(*ast.BinaryExpr); simple {
						y = "(" + y + ")"
					}
					add(OpBoundPlus, off(n.Y.Pos()), off(n.Y.End()), y+"+1")
					add(OpBoundMinus, off(n.Y.Pos()), off(n.Y.End()), y+"-1")
				}
			}
			if n.Op == token.LAND || n.Op == token.LOR {
				add(OpDropCondition, off(n.Pos()), off(n.End()), text(n.X))
				add(OpDropCondition, off(n.Pos()), off(n.End()), text(n.Y))
			}
		case *ast.BasicLit:
			if n.Kind == token.INT {
				if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
					add(OpConstPlus, off(n.Pos()), off(n.End()), strconv.FormatInt(v+1, 10))
					add(OpConstMinus, off(n.Pos()), off(n.End()), strconv.FormatInt(v-1, 10))
				}
			}
		case *ast.IfStmt:
			c := text(n.Cond)
			switch n.Cond.(type) {
			case *ast.Ident, *ast.CallExpr, *ast.SelectorExpr, *ast.ParenExpr:
				c = "!" + c
			default:
				c = "!(" + c + ")"
			}
			add(OpNegateIf, off(n.Cond.Pos()), off(n.Cond.End()), c)
		case *ast.BlockStmt:
			stmtList(n.List, enclosing())
		case *ast.CaseClause:
			stmtList(n.Body, enclosing())
		case *ast.CommClause:
			stmtList(n.Body, enclosing())
		}
		stack = append(stack, n)
		return true
	})
	// Source order, and at one place the order the operators were tried.
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })

	g := &Generated{}
	seen := map[string]bool{string(src): true}
	occurrences := map[exercise.MutantKey]int{}
	for _, e := range edits {
		code := slices.Concat(src[:e.start], []byte(e.text), src[e.end:])
		line := tf.Line(tf.Pos(e.start))
		key := exercise.MutantKey{Op: e.op, Line: strings.TrimSpace(lineText(src, e.start))}
		occurrences[key]++
		key.N = occurrences[key]
		if seen[string(code)] {
			g.Identical++
			continue
		}
		seen[string(code)] = true
		m := GeneratedMutant{Key: key, Line: line, Code: code, Diff: unifiedDiff("solution.go", src, code)}
		if typeChecks(tc, code) {
			g.Mutants = append(g.Mutants, m)
		} else {
			g.NoCompile = append(g.NoCompile, m)
		}
	}
	return g, nil
}

// earlyReturn is a return statement that compiles in a function of type
// fn: zero values for its results, or a bare return for named ones.
func earlyReturn(fn *ast.FuncType, info *types.Info, pkg *types.Package) (string, bool) {
	if fn.Results == nil || len(fn.Results.List) == 0 {
		return "return", true
	}
	if len(fn.Results.List[0].Names) > 0 {
		return "return", true
	}
	var zeros []string
	for _, r := range fn.Results.List {
		tv, ok := info.Types[r.Type]
		if !ok {
			return "", false
		}
		zeros = append(zeros, zeroValue(tv.Type, pkg))
	}
	return "return " + strings.Join(zeros, ", "), true
}

func zeroValue(t types.Type, pkg *types.Package) string {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false"
		case u.Info()&types.IsString != 0:
			return `""`
		case u.Info()&types.IsNumeric != 0:
			return "0"
		}
		return "nil"
	case *types.Struct, *types.Array:
		return types.TypeString(t, func(p *types.Package) string {
			if p == pkg {
				return ""
			}
			return p.Name()
		}) + "{}"
	}
	return "nil"
}

// wholeLines widens [start,end) to the full lines it covers when nothing
// else shares them, so a dropped statement leaves no blank line behind.
func wholeLines(src []byte, start, end int) (int, int) {
	ls := bytes.LastIndexByte(src[:start], '\n') + 1
	le := end
	if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
		le = end + i + 1
	} else {
		le = len(src)
	}
	if len(bytes.TrimSpace(src[ls:start])) == 0 && len(bytes.TrimSpace(src[end:le])) == 0 {
		return ls, le
	}
	return start, end
}

func lineText(src []byte, at int) string {
	ls := bytes.LastIndexByte(src[:at], '\n') + 1
	le := bytes.IndexByte(src[at:], '\n')
	if le < 0 {
		return string(src[ls:])
	}
	return string(src[ls : at+le])
}

func indentAt(src []byte, at int) string {
	ls := bytes.LastIndexByte(src[:at], '\n') + 1
	return string(src[ls:at])
}

// typeChecker type-checks a solution.go as the learner's build would: the
// standard library from source, the SDK from the judge's embedded copy with
// wasip1's build tags. The type checker is far cheaper than a wasm build
// and rejects the same programs (unused variables and imports included).
type typeChecker struct {
	fset *token.FileSet
	std  types.Importer
	sdk  *types.Package
	err  error
	once sync.Once
}

func newTypeChecker(fset *token.FileSet) *typeChecker {
	return &typeChecker{fset: fset, std: importer.ForCompiler(fset, "source", nil)}
}

func (tc *typeChecker) Import(path string) (*types.Package, error) {
	if path != SDKImport {
		return tc.std.Import(path)
	}
	tc.once.Do(func() { tc.sdk, tc.err = tc.loadSDK() })
	return tc.sdk, tc.err
}

func (tc *typeChecker) loadSDK() (*types.Package, error) {
	entries, err := sdkFS.ReadDir("ctrl")
	if err != nil {
		return nil, err
	}
	tags := func(tag string) bool { return tag == "wasip1" || tag == "wasm" || strings.HasPrefix(tag, "go1.") }
	var files []*ast.File
	for _, d := range entries { // ReadDir sorts by name
		if !strings.HasSuffix(d.Name(), ".go") || strings.HasSuffix(d.Name(), "_test.go") {
			continue
		}
		b, err := sdkFS.ReadFile("ctrl/" + d.Name())
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(tc.fset, "ctrl/"+d.Name(), b, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if !buildTagsMatch(f, tags) {
			continue
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: tc}
	return conf.Check(SDKImport, tc.fset, files, nil)
}

func buildTagsMatch(f *ast.File, tags func(string) bool) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				if x, err := constraint.Parse(c.Text); err == nil && !x.Eval(tags) {
					return false
				}
			}
		}
	}
	return true
}

func (tc *typeChecker) check(f *ast.File, info *types.Info) (*types.Package, error) {
	conf := types.Config{Importer: tc}
	return conf.Check("main", tc.fset, []*ast.File{f}, info)
}

func typeChecks(tc *typeChecker, code []byte) bool {
	f, err := parser.ParseFile(tc.fset, "solution.go", code, 0)
	if err != nil {
		return false
	}
	_, err = tc.check(f, nil)
	return err == nil
}

// unifiedDiff is a one-hunk unified diff: a mutant changes one place, so
// trimming the common head and tail finds exactly the changed lines.
func unifiedDiff(name string, a, b []byte) string {
	al, bl := splitKeep(a), splitKeep(b)
	head := 0
	for head < len(al) && head < len(bl) && al[head] == bl[head] {
		head++
	}
	tail := 0
	for tail < len(al)-head && tail < len(bl)-head && al[len(al)-1-tail] == bl[len(bl)-1-tail] {
		tail++
	}
	const context = 3
	from := max(0, head-context)
	toA := min(len(al), len(al)-tail+context)
	toB := min(len(bl), len(bl)-tail+context)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", name, name)
	fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(from, toA-from), hunkRange(from, toB-from))
	line := func(prefix string, s string) {
		sb.WriteString(prefix + s)
		if !strings.HasSuffix(s, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
	for _, s := range al[from:head] {
		line(" ", s)
	}
	for _, s := range al[head : len(al)-tail] {
		line("-", s)
	}
	for _, s := range bl[head : len(bl)-tail] {
		line("+", s)
	}
	for _, s := range al[len(al)-tail : toA] {
		line(" ", s)
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitKeep(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// MutantResult is one generated mutant and what became of it.
type MutantResult struct {
	GeneratedMutant
	Status string // "killed", "survived", "equivalent", "not judged"
	// KilledBy is the first failing test and its oracle, for killed ones.
	KilledBy string
	Oracle   verdict.Oracle
	Reason   string // equivalent: why; not judged: what happened
}

// Mutant statuses.
const (
	MutantKilled     = "killed"
	MutantSurvived   = "survived"
	MutantEquivalent = "equivalent"
	MutantNotJudged  = "not judged"
)

// MutationReport is the mutation score of one exercise's tests.
type MutationReport struct {
	Generated                               int // every variant the operators made, before any filter
	Identical                               int
	NoCompile                               int
	Results                                 []MutantResult // the compiling ones, in source order
	Killed, Survived, Equivalent, NotJudged int
	Stale                                   []exercise.Equivalent // listed, but generated nowhere
}

// KillRate is killed / (killed + survived): equivalent mutants cannot be
// killed, so they count for nothing.
func (r *MutationReport) KillRate() float64 {
	if r.Killed+r.Survived == 0 {
		return 1
	}
	return float64(r.Killed) / float64(r.Killed+r.Survived)
}

// MutateOptions tune Mutate.
type MutateOptions struct {
	Equivalents []exercise.Equivalent
	// Limit, if positive, judges only the first Limit compiling mutants
	// (tests use it; an author wants them all).
	Limit int
	// Progress, if set, hears how many of the total are judged, from the
	// judging goroutines one at a time.
	Progress func(done, total int)
}

// Mutate generates mutants of the exercise's solution and judges each in
// submit mode at the default seed, up to GOMAXPROCS at once. Every mutant is
// judged; a failure of one stops nothing.
func (e *Engine) Mutate(ctx context.Context, ex *exercise.Exercise, opts MutateOptions) (*MutationReport, error) {
	g, err := GenerateMutants(ex.Solution)
	if err != nil {
		return nil, err
	}
	ms := g.Mutants
	if opts.Limit > 0 && len(ms) > opts.Limit {
		ms = ms[:opts.Limit]
	}
	r := &MutationReport{Generated: len(g.Mutants) + len(g.NoCompile) + g.Identical,
		Identical: g.Identical, NoCompile: len(g.NoCompile)}
	r.Results = make([]MutantResult, len(ms))
	listed := map[exercise.MutantKey]int{} // index into opts.Equivalents
	for i, q := range opts.Equivalents {
		listed[q.MutantKey] = i
	}
	used := make([]bool, len(opts.Equivalents))
	for _, m := range append(slices.Clone(g.Mutants), g.NoCompile...) {
		if i, ok := listed[m.Key]; ok {
			used[i] = true
		}
	}
	for i, q := range opts.Equivalents {
		if !used[i] {
			r.Stale = append(r.Stale, q)
		}
	}

	var wg sync.WaitGroup
	var progressMu sync.Mutex
	judged, toJudge := 0, 0
	for _, m := range ms {
		if _, ok := listed[m.Key]; !ok {
			toJudge++
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, m := range ms {
		r.Results[i].GeneratedMutant = m
		if q, ok := listed[m.Key]; ok {
			// Judging it could only confirm that it survives.
			r.Results[i].Status, r.Results[i].Reason = MutantEquivalent, opts.Equivalents[q].Reason
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			v := e.Judge(ctx, Submission{Exercise: ex, Code: m.Code, Mode: verdict.ModeSubmit, Seed: DefaultSeed})
			res := &r.Results[i]
			switch v.Outcome {
			case verdict.OutcomeAccepted:
				res.Status = MutantSurvived
			case verdict.OutcomeNotJudged, verdict.OutcomeInternalError:
				res.Status, res.Reason = MutantNotJudged, string(v.Outcome)+": "+v.Summary()
			case verdict.OutcomeCompileError:
				// The type checker let it through but the build did not.
				res.Status, res.Reason = MutantNotJudged, "did not compile: "+v.Summary()
			default:
				first := v.FirstFailure()
				res.Status, res.KilledBy, res.Oracle = MutantKilled, first.Name, first.Oracle
			}
			if opts.Progress != nil {
				progressMu.Lock()
				judged++
				opts.Progress(judged, toJudge)
				progressMu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, res := range r.Results {
		switch res.Status {
		case MutantKilled:
			r.Killed++
		case MutantSurvived:
			r.Survived++
		case MutantEquivalent:
			r.Equivalent++
		default:
			if strings.HasPrefix(res.Reason, "did not compile") {
				r.NoCompile++
			} else {
				r.NotJudged++
			}
		}
	}
	return r, nil
}
