package exercise

import (
	"bytes"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// GeneratedPrefix names generated scenarios: "generated 1" .. "generated K".
const GeneratedPrefix = "generated "

// isGeneratedName says whether a test name is kept for a generated scenario.
func isGeneratedName(name string) bool {
	n, ok := strings.CutPrefix(name, GeneratedPrefix)
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// Generate is an exercise's generate: block, the generator's ranges.
type Generate struct {
	// Scenarios is K, how many scenarios a submit runs.
	Scenarios int `json:"scenarios"`
	// Deployments and Replicas bound the Deployments at the start, and
	// Replicas every scale step; in a family whose world is made of
	// another kind (owner's Apps), they bound its objects the same way.
	Deployments Range `json:"deployments"`
	Replicas    Range `json:"replicas"`
	// MaxSurge and MaxUnavailable bound a Deployment's rollout strategy.
	MaxSurge       Range `json:"maxSurge"`
	MaxUnavailable Range `json:"maxUnavailable"`
	// Images are the image tags drawn ("v1", "v2"): a Deployment web runs web:TAG.
	Images []string `json:"images"`
	// Steps bounds the number of workload steps.
	Steps Range `json:"steps"`
	// StepKinds and ObjectKinds are those a scenario may draw (see
	// genStepKinds and genObjectKinds).
	StepKinds   []string `json:"stepKinds"`
	ObjectKinds []string `json:"objectKinds"`
	// Faults are the classes a scenario may plan, at most MaxFaults of them.
	Faults    []verdict.Fault `json:"faults"`
	MaxFaults int             `json:"maxFaults"`
	// PodReady lists the kubelet modes a scenario may draw (default: soon).
	PodReady []string `json:"podReady"`
	// Namespaces are where a scenario's Deployments (and what goes with
	// them) live (default: [default]). With two or more, a scenario may
	// put Deployments of the same name in several of them.
	Namespaces []string `json:"namespaces"`
}

// Range is [min, max], both included.
type Range [2]int

func (r Range) Draw(rng *rand.Rand) int {
	if r[1] <= r[0] {
		return r[0]
	}
	return r[0] + rng.IntN(r[1]-r[0]+1)
}

// YAML renders the test as a tests.yaml entry ("  - name: ..."), indented
// as the exercises' tests are, so that an author can paste it under
// tests: and a learner can replay it with judge test ID --scenario FILE.
// Steps other than apply are written as JSON, which YAML reads as is.
func (t *Test) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n", strconv.Quote(t.Name))
	if t.Seed != 0 {
		fmt.Fprintf(&b, "    seed: %d\n", t.Seed)
	}
	if t.Runtime != 0 {
		fmt.Fprintf(&b, "    runtime: %d\n", t.Runtime)
	}
	if t.SkipMissing {
		b.WriteString("    skipMissing: true\n")
	}
	if t.PodReady != "" {
		fmt.Fprintf(&b, "    podReady: %s\n", t.PodReady)
	}
	b.WriteString("    objects: |\n" + indentLines(t.Objects, "      "))
	if len(t.Steps) > 0 {
		b.WriteString("    steps:\n")
		for _, st := range t.Steps {
			if st.Apply != "" {
				if st.Recreate {
					b.WriteString("      - recreate: true\n        apply: |\n" + indentLines(st.Apply, "          "))
					continue
				}
				b.WriteString("      - apply: |\n" + indentLines(st.Apply, "          "))
				continue
			}
			if st.MeanwhileApply != "" {
				b.WriteString("      - meanwhileApply: |\n" + indentLines(st.MeanwhileApply, "          "))
				continue
			}
			st.Parsed = nil
			j, _ := jsonMarshal(st)
			b.WriteString("      - " + j + "\n")
		}
	}
	if len(t.Faults) > 0 {
		b.WriteString("    faults: [" + text.JoinNames(t.Faults, ", ") + "]\n")
	}
	return b.String()
}

func indentLines(s, in string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(in + l + "\n")
	}
	return b.String()
}

// ParseScenario parses one test in tests.yaml syntax (a "- name:" entry
// or a bare mapping), as YAML prints it, for `judge test --scenario`.
func ParseScenario(name string, b []byte, c Checker) (*Test, error) {
	var list []*Test
	if err := yaml.UnmarshalStrict(b, &list); err != nil || len(list) != 1 {
		var t Test
		if err2 := yaml.UnmarshalStrict(b, &t); err2 != nil {
			if err == nil {
				err = fmt.Errorf("a scenario file holds one test, not %d", len(list))
			}
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		list = []*Test{&t}
	}
	t := list[0]
	if t.Name == "" {
		return nil, fmt.Errorf("%s: the test needs a name", name)
	}
	if err := t.Parse(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if c != nil {
		if err := c.CheckTest(t); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
	}
	return t, nil
}

// jsonMarshal is json.Marshal without HTML escaping, for YAML people read.
func jsonMarshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return strings.TrimSpace(b.String()), err
}

// GeneratedTests says how many generated scenarios a submit of the
// exercise runs ("generated 1" .. "generated K"), 0 for none.
func (e *Exercise) GeneratedTests() int {
	if e.Suite.Generate == nil {
		return 0
	}
	return e.Suite.Generate.Scenarios
}

// IsGeneratedTest says whether name is one of the exercise's generated
// scenarios.
func (e *Exercise) IsGeneratedTest(name string) bool {
	n, ok := strings.CutPrefix(name, GeneratedPrefix)
	i, err := strconv.Atoi(n)
	return ok && err == nil && i >= 1 && i <= e.GeneratedTests() && name == GeneratedPrefix+strconv.Itoa(i)
}
