package exercise

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"sigs.k8s.io/yaml"
)

// EquivalentFile lists, next to tests.yaml, the generated mutants that
// behave like the solution.
const EquivalentFile = "equivalent.yaml"

// Equivalent is one entry of equivalent.yaml.
type Equivalent struct {
	MutantKey
	Reason string `json:"reason"`
}

// ParseEquivalents reads an equivalent.yaml: a list of {op, line, index, reason}.
func ParseEquivalents(name string, b []byte) ([]Equivalent, error) {
	var es []Equivalent
	if err := yaml.UnmarshalStrict(b, &es); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for i, e := range es {
		if e.Op == "" || e.Line == "" || e.N < 1 || strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%s: entry %d needs op, line, index (from 1) and a reason", name, i+1)
		}
	}
	return es, nil
}

// LoadEquivalents reads the exercise's equivalent.yaml from the catalog's
// file system; a missing file lists nothing.
func LoadEquivalents(fsys fs.FS, ex *Exercise) ([]Equivalent, error) {
	name := ex.Dir + "/" + EquivalentFile
	b, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseEquivalents(name, b)
}

// MutantKey names a generated mutant so that it survives edits elsewhere in
// solution.go: the operator, the solution's line it changes (trimmed), and
// which of the mutants with that operator and line text it is, from 1.
type MutantKey struct {
	Op   string `json:"op"`
	Line string `json:"line"`
	N    int    `json:"index"`
}

func (k MutantKey) String() string { return fmt.Sprintf("%s %q #%d", k.Op, k.Line, k.N) }
