package main

import (
	"os/exec"
	"strings"
	"testing"
)

// What the records, the reports and the instructor pages must not link:
// the engine, the simulated cluster, the sandbox and the WebAssembly
// runtime. They read stored
// verdicts; only judging needs those.
var (
	engineFree = []string{"ctrljudge/judge/records", "ctrljudge/judge/report", "ctrljudge/web/instructor"}
	forbidden  = []string{"github.com/tetratelabs/wazero", "ctrljudge/sandbox", "ctrljudge/judge", "ctrljudge/judge/cluster"}
)

// isForbidden matches a forbidden package and, but for the engine's root
// package, those under it.
func isForbidden(pkg string) bool {
	for _, f := range forbidden {
		if pkg == f || f != "ctrljudge/judge" && strings.HasPrefix(pkg, f+"/") {
			return true
		}
	}
	return false
}

func TestRecordsReportsAndPagesDoNotLinkTheEngine(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, engineFree...)
	out, err := exec.Command(goBin, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			imports[f[0]] = f[1:]
		}
	}
	for _, pkg := range engineFree {
		// Walk the imports, remembering how each package was reached.
		via := map[string]string{pkg: ""}
		todo := []string{pkg}
		for len(todo) > 0 {
			p := todo[0]
			todo = todo[1:]
			if isForbidden(p) {
				path := []string{p}
				for q := via[p]; q != ""; q = via[q] {
					path = append([]string{q}, path...)
				}
				t.Errorf("%s depends on %s: %s", pkg, p, strings.Join(path, " → "))
				continue
			}
			for _, q := range imports[p] {
				if _, seen := via[q]; seen {
					continue
				}
				via[q] = p
				todo = append(todo, q)
			}
		}
	}
}
