package judge

import (
	_ "embed"
	"strings"
)

// keptFunctions names the functions of the Go runtime and standard
// library that judging calls: the exercises' solutions, starters and
// mutants, the bug corpus, the learner fixtures and testdata/keep (the
// standard library as learners often call it), every test in submit
// mode. Only these, the learner's package and the SDK are compiled in a
// learner's module; the rest are stubs, and a test whose
// controller reaches one is played again on the whole module
// (sandbox/prune.go, playTest). A list out of date costs time, never a
// verdict. Made by
//
//	CTRLJUDGE_UPDATE_KEPT_FUNCTIONS=1 go test -run TestKeptFunctionsList ./judge/
//
//go:embed kept_functions.txt
var keptFunctions string

// keptFunctionList is keptFunctions as a list, and the SDK whole (a
// learner may call any of it).
func keptFunctionList() []string {
	names := []string{"ctrljudge*"}
	for _, line := range strings.Split(keptFunctions, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names
}
