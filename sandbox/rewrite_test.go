package sandbox

import (
	"bytes"
	"testing"
)

// The module written once, every pass an edit, is the module the passes
// wrote one after another: the same sections, in the same order, with
// the same bodies (only the width of the sizes differs).
func TestOneRewriteIsThePassesInTurn(t *testing.T) {
	_, _ = module(t)
	keep := newKeepList([]string{"runtime.mallocgc", "runtime.main"})

	step := mergeData(testWasm)
	step, _ = exportGlobals(step)
	info, ok := readNames(step)
	if !ok {
		t.Fatal("no names in the test module")
	}
	step, pruned := prune(step, info, keep)

	info, _ = readNames(testWasm)
	exports, _ := exportEdit(testWasm)
	code, stub := pruneEdit(testWasm, info, keep)
	table := tableEdit(testWasm, info, stub)
	once := rewrite(testWasm, memoryAtStart(testWasm).mergeEdit(), exports, namesEdit(info), code, table)

	if pruned == 0 || pruned != stubs(stub) || table == nil {
		t.Fatalf("%d functions pruned in turn, %d at once (table edit %v)", pruned, stubs(stub), table != nil)
	}
	a, b := sectionList(t, step), sectionList(t, once)
	if len(a) != len(b) {
		t.Fatalf("%d sections in turn, %d at once", len(a), len(b))
	}
	for i := range a {
		if a[i].id != b[i].id || !bytes.Equal(a[i].body, b[i].body) {
			t.Errorf("section %d: id %d (%d bytes) in turn, id %d (%d bytes) at once", i, a[i].id, len(a[i].body), b[i].id, len(b[i].body))
		}
	}
}

type section struct {
	id   byte
	body []byte
}

func sectionList(t *testing.T, m []byte) []section {
	t.Helper()
	var out []section
	for i := 8; i < len(m); {
		size, n := uleb32(m[i+1:])
		if n == 0 || i+1+n+int(size) > len(m) {
			t.Fatalf("a section at %d does not fit", i)
		}
		out = append(out, section{m[i], m[i+1+n : i+1+n+int(size)]})
		i += 1 + n + int(size)
	}
	return out
}

// BenchmarkRewrite rewrites the test module as Compile does, every pass an
// edit written once, and with the passes in turn, each copying the module:
//
//	go test -run '^$' -bench Rewrite -benchmem ./sandbox/
func BenchmarkRewrite(b *testing.B) {
	_, _ = module(b)
	keep := newKeepList([]string{"runtime.mallocgc", "runtime.main"})
	b.Run("once", func(b *testing.B) {
		for b.Loop() {
			info, _ := readNames(testWasm)
			exports, _ := exportEdit(testWasm)
			code, stub := pruneEdit(testWasm, info, keep)
			rewrite(testWasm, memoryAtStart(testWasm).mergeEdit(), exports, namesEdit(info), code, tableEdit(testWasm, info, stub))
		}
	})
	b.Run("in-turn", func(b *testing.B) {
		for b.Loop() {
			m, _ := exportGlobals(mergeData(testWasm))
			info, _ := readNames(m)
			prune(m, info, keep)
		}
	})
}

// The passes one at a time, each copying the whole module, as Compile
// ran them before they were edits.

// mergeData returns m with its active data segments merged, or m itself
// when it is not the plain shape merging is known to be invisible in.
func mergeData(m []byte) []byte {
	if a := memoryAtStart(m); a != nil {
		if e := a.mergeEdit(); e != nil {
			return rewrite(m, e)
		}
	}
	return m
}

// exportGlobals returns m with every mutable global it defines exported
// as globalExportPrefix+index, and those names; or m and nil when m is not
// of the plain shape this knows.
func exportGlobals(m []byte) ([]byte, []string) {
	e, names := exportEdit(m)
	if e == nil {
		return m, nil
	}
	return rewrite(m, e), names
}

// prune returns m, without its name section, with every prunable
// function keep lacks compiled as a stub and left out of the table, and
// how many were; 0 when m has no names or does not import ctrljudge.call
// (then m is returned as it is).
func prune(m []byte, info moduleNames, keep *keepList) ([]byte, int) {
	e, stub := pruneEdit(m, info, keep)
	if e == nil {
		return m, 0
	}
	return rewrite(m, e, tableEdit(m, info, stub), namesEdit(info)), stubs(stub)
}
