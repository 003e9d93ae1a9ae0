package sandbox

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Limits on what the learner's file asks of the compiler, checked on its
// source before any tool runs. Each measures something the source alone
// determines, so a build they refuse is refused every time, at a line of
// the learner's, whatever the machine is doing; the kernel's limits on
// the tools stay as a net whose firing is not the program's verdict
// (BusyError). Figures: RATIONALE.md, "Why are builds refused on their
// source?".
const (
	// maxConstStringBytes bounds the constant strings of the file, all
	// together: the compiler keeps each one whole (in its export data even
	// when unused) and needed about 12 bytes of memory per byte of them.
	maxConstStringBytes = 4 << 20
	// maxLiteralBytes bounds the storage of the file's composite literals,
	// all together: a static literal is written out whole, zeros included,
	// and a module with twice that much data passes maxModuleBytes.
	maxLiteralBytes = 8 << 20
	// maxInstanceWeight bounds generic code after instantiation: the sum,
	// over every instance the program needs, of the size (syntax nodes) of
	// its generic declaration. The compiler needed about 3 KB of memory
	// and 20 µs of CPU per node instantiated.
	maxInstanceWeight = 50_000
	// importedInstanceWeight stands for the body of a generic function or
	// type of another package, which the check cannot see.
	importedInstanceWeight = 200
	// maxTypeParts bounds the types of the program as the compiler spells
	// them, in parts (a defined type is one, with its type arguments),
	// summed over the distinct types: the compiler names every type it
	// writes out by its whole spelling, and [1][1]…[1]int nested N deep is
	// N types whose names take N²/2 parts in all.
	maxTypeParts = 100_000
)

// checkSource applies the source limits to p's untrusted file, type
// checked with the other Go files of its package (others, trusted) and
// imports read from the export data lookup finds (nil: none resolve). It
// returns the learner's diagnostics, or nil.
func checkSource(p Program, others map[string][]byte, lookup importer.Lookup) (diags []Diagnostic) {
	// It runs in the judge's process on a stranger's file: should go/types
	// or the walk panic, the build goes on as unchecked, under the net,
	// rather than take the judge down.
	defer func() {
		if recover() != nil {
			diags = nil
		}
	}()
	diags, _ = measureSource(p, others, lookup)
	return diags
}

// sourceFigures are what the limits measured of a file: where a check
// refused the file, those after it are not measured.
type sourceFigures struct {
	strings, literals int64
	typeParts         int64
	instanceWeight    int
	typeErrors        bool
}

func measureSource(p Program, others map[string][]byte, lookup importer.Lookup) ([]Diagnostic, sourceFigures) {
	var fig sourceFigures
	fset := token.NewFileSet()
	var imp types.Importer = noImporter{}
	if lookup != nil {
		imp = importer.ForCompiler(fset, "gc", lookup)
	}
	f, err := parser.ParseFile(fset, p.MainName, p.Main, parser.SkipObjectResolution)
	if err != nil {
		return nil, fig // vetSource has refused it already
	}
	at := func(pos token.Pos, msg string) ([]Diagnostic, sourceFigures) {
		ps := fset.Position(pos)
		return []Diagnostic{{File: p.MainName, Line: ps.Line, Column: ps.Column, Message: msg}}, fig
	}
	// First, before go/types: it spells out whole the strings it measures
	// (len, switch cases, map keys), and it runs in this process.
	pos, n, total := constStrings(f, imp)
	fig.strings = total
	if total > maxConstStringBytes {
		if n > maxConstStringBytes {
			return at(pos, fmt.Sprintf("this constant string is %s long; the constant strings of a file may be at most %s in all (compiling it would need more memory than a build is allowed)", sizeWords(n), sizeWords(maxConstStringBytes)))
		}
		return at(pos, fmt.Sprintf("the constant strings of your file pass %s in all here; they may be at most that (compiling them would need more memory than a build is allowed)", sizeWords(maxConstStringBytes)))
	}

	files := []*ast.File{f}
	for name, data := range others {
		g, err := parser.ParseFile(fset, name, data, parser.SkipObjectResolution)
		if err != nil {
			return nil, fig
		}
		files = append(files, g)
	}
	typeErrors := false
	conf := types.Config{
		Importer: imp,
		Sizes:    types.SizesFor("gc", "wasm"),
		Error:    func(error) { typeErrors = true },
	}
	if v := goLine(p.Files["go.mod"]); v != "" {
		conf.GoVersion = "go" + v
	}
	info := &types.Info{
		Types:     map[ast.Expr]types.TypeAndValue{},
		Defs:      map[*ast.Ident]types.Object{},
		Uses:      map[*ast.Ident]types.Object{},
		Instances: map[*ast.Ident]types.Instance{},
	}
	conf.Check("main", fset, files, info)
	if typeErrors {
		// The compiler's own type checker finds the same errors and stops
		// before it generates any code: nothing left to bound.
		fig.typeErrors = true
		return nil, fig
	}
	pos, n, total = literalBytes(f, info, conf.Sizes)
	fig.literals = total
	if total > maxLiteralBytes {
		if n > maxLiteralBytes {
			return at(pos, fmt.Sprintf("this composite literal is %s; literals may be at most %s in all (a program's memory is %d MiB)", sizeWords(n), sizeWords(maxLiteralBytes), memoryLimitPages>>4))
		}
		return at(pos, fmt.Sprintf("the composite literals of your file pass %s in all here; they may be at most that (a program's memory is %d MiB)", sizeWords(maxLiteralBytes), memoryLimitPages>>4))
	}
	ts := newTypeSizes()
	pos = sourceTypes(fset, info, p.MainName, ts)
	fig.typeParts = ts.total
	if pos != token.NoPos {
		return at(pos, typesWhy(0))
	}
	g := newInstances(fset, files, info, ts)
	pos, why, weight := g.expand()
	fig.instanceWeight, fig.typeParts = weight, ts.total
	if why != "" {
		if fset.Position(pos).Filename != p.MainName {
			pos = f.Name.Pos() // not expected: the trusted files' roots are small
		}
		return at(pos, why)
	}
	return nil, fig
}

type noImporter struct{}

func (noImporter) Import(path string) (*types.Package, error) {
	return nil, fmt.Errorf("%s: not available", path)
}

// typesWhy explains a refusal for types too large: one type argument of
// n parts, or (n = 0) all of them.
func typesWhy(n int64) string {
	what := "the types of your file, spelled out in full, pass %[2]d parts in all here"
	if n > 0 {
		what = "this instantiates generic code with a type argument of %[1]d parts, spelled out in full, and types may have at most %[2]d in all"
	}
	return fmt.Sprintf(what+" (the compiler names each type by its whole spelling; [1][1]…[1]int nested 500 deep is 500 types of 125,750 parts in all), and compiling names that long would need more memory than a build is allowed", n, maxTypeParts)
}

// lookup opens the archive of an import, for its export data.
func (k *kit) lookup(ip string) (io.ReadCloser, error) {
	k.mu.Lock()
	file, ok := k.pkgs[ip]
	k.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: not in the kit", ip)
	}
	return os.Open(file)
}

// sizeWords says n bytes for a learner.
func sizeWords(n int64) string {
	switch {
	case n >= 1<<60:
		return "more than an exbibyte"
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// addSat adds sizes, saturating: a doubling chain 70 steps long
// overflows int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// constStrings bounds, from the syntax alone, the constant strings of f:
// every constant's value (a declaration with an implicit value repeats
// the one before) and every use of a constant outside constant
// declarations (where the compiler spells it out as data). Names are not
// resolved: a name stands for the longest constant of that name, which
// can only overstate. It returns the total, and the first value over the
// limit and where it is, or else where the total passes the limit.
func constStrings(f *ast.File, imp types.Importer) (pos token.Pos, first, total int64) {
	type spec struct {
		name *ast.Ident
		val  ast.Expr
	}
	var specs []spec
	byName := map[string][]ast.Expr{}
	ast.Inspect(f, func(n ast.Node) bool {
		d, ok := n.(*ast.GenDecl)
		if !ok || d.Tok != token.CONST {
			return true
		}
		var last []ast.Expr
		for _, s := range d.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Values) > 0 {
				last = vs.Values
			}
			for i, name := range vs.Names {
				if i < len(last) && name.Name != "_" {
					byName[name.Name] = append(byName[name.Name], last[i])
				}
				if i < len(last) {
					specs = append(specs, spec{name, last[i]})
				}
			}
		}
		return true
	})
	// Imported constants: their values come from trusted archives.
	imports := map[string]*types.Package{}
	if _, none := imp.(noImporter); !none {
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			pkg, err := imp.Import(ip)
			if err != nil || pkg == nil {
				continue
			}
			name := pkg.Name()
			if is.Name != nil {
				name = is.Name.Name
			}
			imports[name] = pkg
		}
	}
	memo := map[string]int64{}
	busy := map[string]bool{}
	var nameLen func(string) int64
	var exprLen func(ast.Expr) int64
	exprLen = func(e ast.Expr) int64 {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.STRING {
				if s, err := strconv.Unquote(e.Value); err == nil {
					return int64(len(s))
				}
				return int64(len(e.Value))
			}
		case *ast.Ident:
			return nameLen(e.Name)
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != nil {
				if c, ok := imports[x.Name].Scope().Lookup(e.Sel.Name).(*types.Const); ok && c.Val().Kind() == constant.String {
					return int64(len(constant.StringVal(c.Val())))
				}
			}
		case *ast.ParenExpr:
			return exprLen(e.X)
		case *ast.BinaryExpr:
			if e.Op == token.ADD {
				return addSat(exprLen(e.X), exprLen(e.Y))
			}
		case *ast.CallExpr:
			// A conversion, or a builtin such as len: what it spells out.
			if len(e.Args) == 1 {
				return exprLen(e.Args[0])
			}
		}
		return 0
	}
	nameLen = func(name string) int64 {
		if n, ok := memo[name]; ok {
			return n
		}
		if busy[name] {
			return 0 // a cycle: the type checker refuses it
		}
		busy[name] = true
		var n int64
		for _, v := range byName[name] {
			n = max(n, exprLen(v))
		}
		busy[name] = false
		memo[name] = n
		return n
	}
	type use struct {
		at token.Pos
		n  int64
	}
	var uses []use
	for _, s := range specs {
		uses = append(uses, use{s.name.Pos(), exprLen(s.val)})
	}
	// Uses outside constant declarations: not a name after a dot, nor one
	// being declared.
	not := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			if n.Tok == token.CONST {
				return false
			}
		case *ast.SelectorExpr:
			not[n.Sel] = true
		case *ast.Field:
			for _, id := range n.Names {
				not[id] = true
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				not[id] = true
			}
		case *ast.TypeSpec:
			not[n.Name] = true
		case *ast.FuncDecl:
			not[n.Name] = true
		case *ast.Ident:
			if !not[n] && len(byName[n.Name]) > 0 {
				uses = append(uses, use{n.Pos(), nameLen(n.Name)})
			}
		}
		return true
	})
	// In the order of the source, so that "here" is where a reader adding
	// them up would pass the limit.
	slices.SortStableFunc(uses, func(a, b use) int { return int(a.at) - int(b.at) })
	for _, u := range uses {
		total = addSat(total, u.n)
		if first == 0 && u.n > maxConstStringBytes {
			pos, first = u.at, u.n
		}
		if pos == token.NoPos && total > maxConstStringBytes {
			pos = u.at
		}
	}
	return pos, first, total
}

// literalBytes measures the storage of f's composite literals: an array
// or struct literal by its type's size, a slice literal by its length
// (its highest index, with keys) times its element's size. A literal
// inside an array or struct literal is part of its storage, and counted
// there. It returns the total, and the first literal over the limit and
// where it is, or else where the total passes the limit.
func literalBytes(f *ast.File, info *types.Info, sizes types.Sizes) (pos token.Pos, first, total int64) {
	// visit counts the literals in n; a literal that is n itself, stored
	// within its parent's storage (inline), was counted with the parent.
	var visit func(n ast.Node, inline bool)
	visit = func(n ast.Node, inline bool) {
		ast.Inspect(n, func(x ast.Node) bool {
			lit, ok := x.(*ast.CompositeLit)
			if !ok {
				return true
			}
			size, kept := litSize(lit, info, sizes)
			if inline && kept && x == n {
				size = 0
			}
			total = addSat(total, size)
			if first == 0 && size > maxLiteralBytes {
				pos, first = lit.Pos(), size
			}
			if pos == token.NoPos && total > maxLiteralBytes {
				pos = lit.Pos()
			}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					visit(kv.Key, false)
					e = kv.Value
				}
				visit(e, kept)
			}
			return false
		})
	}
	visit(f, false)
	return pos, first, total
}

// litSize is the storage of one composite literal, and whether literals
// directly inside it are stored within it.
func litSize(lit *ast.CompositeLit, info *types.Info, sizes types.Sizes) (int64, bool) {
	tv, ok := info.Types[lit]
	if !ok || tv.Type == nil {
		return 0, false
	}
	sizeOf := func(t types.Type) int64 {
		n := sizes.Sizeof(t)
		if n < 0 {
			return math.MaxInt64 // too large to say
		}
		return n
	}
	switch t := tv.Type.Underlying().(type) {
	case *types.Array, *types.Struct:
		return sizeOf(t), true
	case *types.Slice:
		var n, next int64
		for _, e := range lit.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if v, ok := constant.Int64Val(constant.ToInt(info.Types[kv.Key].Value)); ok {
					next = v
				}
			}
			next++
			n = max(n, next)
		}
		es := sizeOf(t.Elem())
		if es > 0 && n > math.MaxInt64/es {
			return math.MaxInt64, false
		}
		return n * es, false
	}
	return 0, false
}

// instances counts the generic code a program needs, as the compiler
// instantiates it: from each instantiation in non-generic code, through
// the instantiations in the generic declaration's body with its type
// parameters replaced, to every instance reachable. The count stops at
// maxInstanceWeight, so the check costs no more than that whatever the
// program.
type instances struct {
	fset    *token.FileSet
	info    *types.Info
	types   *typeSizes
	decls   map[types.Object]*declInfo // generic declarations of the package
	methods map[*types.TypeName][]*types.Func
	roots   []edge
}

type declInfo struct {
	params *types.TypeParamList
	edges  []edge
	weight int
}

// edge is one instantiation written in the source.
type edge struct {
	obj  types.Object // the generic function, method or type
	args []types.Type
	pos  token.Pos
}

func newInstances(fset *token.FileSet, files []*ast.File, info *types.Info, ts *typeSizes) *instances {
	g := &instances{fset: fset, info: info, types: ts, decls: map[types.Object]*declInfo{}, methods: map[*types.TypeName][]*types.Func{}}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				fn, _ := info.Defs[d.Name].(*types.Func)
				if fn == nil {
					continue
				}
				sig := fn.Type().(*types.Signature)
				params := sig.TypeParams()
				if params.Len() == 0 {
					params = sig.RecvTypeParams()
				}
				g.add(fn, params, d)
				if sig.RecvTypeParams().Len() > 0 {
					if tn := recvTypeName(sig); tn != nil {
						g.methods[tn] = append(g.methods[tn], fn)
					}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						tn, _ := info.Defs[s.Name].(*types.TypeName)
						var params *types.TypeParamList
						if named, ok := types.Unalias(tnType(tn)).(*types.Named); ok && tn != nil && !tn.IsAlias() {
							params = named.TypeParams()
						}
						if tn != nil {
							g.add(tn, params, s)
						}
					default:
						g.add(nil, nil, s)
					}
				}
			}
		}
	}
	return g
}

func tnType(tn *types.TypeName) types.Type {
	if tn == nil {
		return nil
	}
	return tn.Type()
}

func recvTypeName(sig *types.Signature) *types.TypeName {
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Origin().Obj()
	}
	return nil
}

// add records the instantiations written in the declaration n of obj:
// those of a generic declaration are its edges, the others roots.
func (g *instances) add(obj types.Object, params *types.TypeParamList, n ast.Node) {
	d := &declInfo{params: params}
	ast.Inspect(n, func(n ast.Node) bool {
		if n != nil {
			d.weight++
		}
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		inst, ok := g.info.Instances[id]
		if !ok {
			return true
		}
		target := g.info.Uses[id]
		if target == nil {
			target = g.info.Defs[id]
		}
		switch t := target.(type) {
		case *types.Func:
			target = t.Origin()
		case nil:
			return true
		}
		e := edge{obj: target, pos: id.Pos()}
		for i := 0; i < inst.TypeArgs.Len(); i++ {
			e.args = append(e.args, inst.TypeArgs.At(i))
		}
		d.edges = append(d.edges, e)
		return true
	})
	if params.Len() > 0 && obj != nil {
		g.decls[obj] = d
		return
	}
	g.roots = append(g.roots, d.edges...)
}

// expand walks every instance reachable from the roots. It returns why
// the program needs too much, and at which root, or "", and the weight
// of the instances it walked.
func (g *instances) expand() (token.Pos, string, int) {
	seen := map[string]bool{}
	weight := 0
	type item struct {
		e    edge
		root token.Pos
	}
	// Root by root in the order of the source, so that the one blamed is
	// where the total passes the limit.
	var queue []item
	for next := 0; len(queue) > 0 || next < len(g.roots); {
		if len(queue) == 0 {
			queue = append(queue, item{g.roots[next], g.roots[next].pos})
			next++
		}
		it := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		// Measured before they are spelled out for the key.
		for _, a := range it.e.args {
			if g.types.of(a) > maxTypeParts {
				return it.root, typesWhy(g.types.of(a)), weight
			}
		}
		key := genericKey(it.e)
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, a := range it.e.args {
			g.types.count(a)
		}
		if g.types.total > maxTypeParts {
			return it.root, typesWhy(0), weight
		}
		d := g.decls[it.e.obj]
		if d == nil {
			weight += importedInstanceWeight
		} else {
			weight += d.weight
		}
		if weight > maxInstanceWeight {
			return it.root, fmt.Sprintf("the generic code this instantiates would be more than %d syntax nodes once instantiated (%d instances so far, the last %s); generic code may grow to at most that (compiling it would need more memory than a build is allowed)", maxInstanceWeight, len(seen), trim(key, 80)), weight
		}
		if d == nil || d.params.Len() != len(it.e.args) {
			continue
		}
		m := map[*types.TypeParam]types.Type{}
		for i, a := range it.e.args {
			m[d.params.At(i)] = a
		}
		for _, e := range d.edges {
			next := edge{obj: e.obj, pos: e.pos}
			for _, a := range e.args {
				next.args = append(next.args, subst(a, m))
			}
			queue = append(queue, item{next, it.root})
		}
		// An instance of a generic type has its methods instantiated too.
		if tn, ok := it.e.obj.(*types.TypeName); ok {
			for _, fn := range g.methods[tn] {
				queue = append(queue, item{edge{obj: fn, args: it.e.args, pos: it.e.pos}, it.root})
			}
		}
	}
	return token.NoPos, "", weight
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// genericKey names an instance.
func genericKey(e edge) string {
	var b strings.Builder
	if pkg := e.obj.Pkg(); pkg != nil {
		b.WriteString(pkg.Path() + ".")
	}
	if fn, ok := e.obj.(*types.Func); ok {
		if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
			b.WriteString(types.TypeString(recv.Type(), nil) + ".")
		}
	}
	b.WriteString(e.obj.Name() + "[")
	for i, a := range e.args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.TypeString(a, nil))
	}
	b.WriteString("]")
	return b.String()
}

// typeSizes measures types in parts, as the compiler spells them: a
// type's size is one plus its components' (a defined type's components
// are its type arguments, not its underlying type, which its name stands
// for). Sizes are kept by identity, so a type that shares its parts is
// measured in time linear in its distinct parts, however long its
// spelling; they saturate.
type typeSizes struct {
	size    map[types.Type]int64
	counted map[types.Type]bool
	total   int64 // the sizes of the distinct types counted
}

func newTypeSizes() *typeSizes {
	return &typeSizes{size: map[types.Type]int64{}, counted: map[types.Type]bool{}}
}

// of is the size of t.
func (ts *typeSizes) of(t types.Type) int64 {
	if n, ok := ts.size[t]; ok {
		return n
	}
	n := int64(1)
	for _, c := range typeParts(t) {
		n = addSat(n, ts.of(c))
	}
	ts.size[t] = n
	return n
}

// count adds t, and each of its components, to the total, once each.
func (ts *typeSizes) count(t types.Type) {
	if t == nil || ts.counted[t] {
		return
	}
	ts.counted[t] = true
	ts.total = addSat(ts.total, ts.of(t))
	for _, c := range typeParts(t) {
		ts.count(c)
	}
}

// typeParts are the types t's spelling is made of.
func typeParts(t types.Type) []types.Type {
	switch t := t.(type) {
	case *types.Pointer:
		return []types.Type{t.Elem()}
	case *types.Slice:
		return []types.Type{t.Elem()}
	case *types.Array:
		return []types.Type{t.Elem()}
	case *types.Chan:
		return []types.Type{t.Elem()}
	case *types.Map:
		return []types.Type{t.Key(), t.Elem()}
	case *types.Struct:
		out := make([]types.Type, t.NumFields())
		for i := range out {
			out[i] = t.Field(i).Type()
		}
		return out
	case *types.Signature:
		var out []types.Type
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := 0; i < tup.Len(); i++ {
				out = append(out, tup.At(i).Type())
			}
		}
		return out
	case *types.Interface:
		var out []types.Type
		for i := 0; i < t.NumExplicitMethods(); i++ {
			out = append(out, t.ExplicitMethod(i).Type())
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			out = append(out, t.EmbeddedType(i))
		}
		return out
	case *types.Named:
		out := make([]types.Type, t.TypeArgs().Len())
		for i := range out {
			out[i] = t.TypeArgs().At(i)
		}
		return out
	case *types.Alias:
		return []types.Type{types.Unalias(t)}
	}
	return nil
}

// sourceTypes counts the types of the expressions and type expressions
// of the file name, in the order of the source. It returns where the
// total passes maxTypeParts, if it does.
func sourceTypes(fset *token.FileSet, info *types.Info, name string, ts *typeSizes) token.Pos {
	var exprs []ast.Expr
	for e, tv := range info.Types {
		if tv.Type != nil && fset.Position(e.Pos()).Filename == name {
			exprs = append(exprs, e)
		}
	}
	slices.SortFunc(exprs, func(a, b ast.Expr) int {
		if a.Pos() != b.Pos() {
			return int(a.Pos()) - int(b.Pos())
		}
		return int(a.End()) - int(b.End())
	})
	for _, e := range exprs {
		ts.count(info.Types[e].Type)
		if ts.total > maxTypeParts {
			return e.Pos()
		}
	}
	return token.NoPos
}

// subst replaces the type parameters of m in t. Kinds of type it does not
// rebuild (interfaces) are kept as they are, which may merge instances
// the compiler keeps apart, never the other way round by much.
func subst(t types.Type, m map[*types.TypeParam]types.Type) types.Type {
	switch t := t.(type) {
	case *types.TypeParam:
		if a, ok := m[t]; ok {
			return a
		}
	case *types.Pointer:
		return types.NewPointer(subst(t.Elem(), m))
	case *types.Slice:
		return types.NewSlice(subst(t.Elem(), m))
	case *types.Array:
		return types.NewArray(subst(t.Elem(), m), t.Len())
	case *types.Chan:
		return types.NewChan(t.Dir(), subst(t.Elem(), m))
	case *types.Map:
		return types.NewMap(subst(t.Key(), m), subst(t.Elem(), m))
	case *types.Struct:
		fields := make([]*types.Var, t.NumFields())
		tags := make([]string, t.NumFields())
		for i := range fields {
			f := t.Field(i)
			fields[i] = types.NewField(f.Pos(), f.Pkg(), f.Name(), subst(f.Type(), m), f.Embedded())
			tags[i] = t.Tag(i)
		}
		return types.NewStruct(fields, tags)
	case *types.Signature:
		return types.NewSignatureType(nil, nil, nil, substTuple(t.Params(), m), substTuple(t.Results(), m), t.Variadic())
	case *types.Named:
		if t.TypeArgs().Len() == 0 {
			return t
		}
		args := make([]types.Type, t.TypeArgs().Len())
		for i := range args {
			args[i] = subst(t.TypeArgs().At(i), m)
		}
		if n, err := types.Instantiate(nil, t.Origin(), args, false); err == nil {
			return n
		}
	case *types.Alias:
		return subst(types.Unalias(t), m)
	}
	return t
}

func substTuple(t *types.Tuple, m map[*types.TypeParam]types.Type) *types.Tuple {
	if t == nil {
		return nil
	}
	vars := make([]*types.Var, t.Len())
	for i := range vars {
		v := t.At(i)
		vars[i] = types.NewParam(v.Pos(), v.Pkg(), v.Name(), subst(v.Type(), m))
	}
	return types.NewTuple(vars...)
}
