package judge

import (
	_ "embed"
	"strings"
)

// runtimeFunctions names the functions of the Go runtime that judging
// calls: the exercises' solutions, starters and mutants, the bug corpus
// and the learner fixtures, every test in submit mode. Only these are
// compiled in a learner's module; the rest are stubs, and a test whose
// controller reaches one is played again on the whole module
// (sandbox/prune.go, playTest). A list out of date costs time, never a
// verdict. Made by
//
//	CTRLJUDGE_UPDATE_RUNTIME_FUNCTIONS=1 go test -run TestRuntimeFunctionsList ./judge/
//
//go:embed runtime_functions.txt
var runtimeFunctions string

// keptRuntimeFunctions is runtimeFunctions as a list.
func keptRuntimeFunctions() []string {
	var names []string
	for _, line := range strings.Split(runtimeFunctions, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names
}
