package exercise

import (
	"encoding/json"
	"strings"
	"testing"
)

// A test prints as tests.yaml text (YAML) and travels as JSON: what the
// loader derives from it (parsed objects, whether it was drawn) is not
// part of either.
func TestParsedFieldsStayOutOfTheText(t *testing.T) {
	s, err := ParseSuite("tests.yaml", []byte(`controller: {for: Deployment}
model: m
tests:
  - name: one
    sample: true
    objects: |
      kind: ConfigMap
      apiVersion: v1
      metadata: {name: c}
    steps:
      - delete: ConfigMap/c
      - apply: |
          kind: ConfigMap
          apiVersion: v1
          metadata: {name: d}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	tc := s.Tests[0]
	if len(tc.Parsed) != 1 || len(tc.Steps[1].Parsed) != 1 {
		t.Fatalf("manifests not parsed: %d, %d", len(tc.Parsed), len(tc.Steps[1].Parsed))
	}
	tc.Generated = true
	b, _ := json.Marshal(tc)
	for _, out := range []string{string(b), tc.YAML()} {
		if strings.Contains(out, "Parsed") || strings.Contains(out, "Generated") {
			t.Errorf("derived fields in %s", out)
		}
	}
}
