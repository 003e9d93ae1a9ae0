package judge

import (
	"ctrljudge/judge/cluster"
	"ctrljudge/judge/exercise"
	"fmt"
	"slices"
	"strings"
)

// Checks are the engine's checks of an exercise's tests.yaml, for
// LoadCatalog: the model names a family, the kubelet modes exist, the
// generate: block asks only for what the family's generator draws.
var Checks exercise.Checker = checks{}

type checks struct{}

func (checks) CheckSuite(s *exercise.Suite) error {
	if _, ok := models[s.Model]; !ok {
		return fmt.Errorf("unknown model %q", s.Model)
	}
	if !slices.Contains(cluster.PodReadyModes, s.World.PodReady) {
		return fmt.Errorf("world.podReady: %q is none of %s", s.World.PodReady, strings.Join(cluster.PodReadyModes, ", "))
	}
	if s.Generate != nil {
		return checkGenerate(s.Generate, s.Model)
	}
	return nil
}

func (checks) CheckTest(t *exercise.Test) error {
	if t.PodReady != "" && !slices.Contains(cluster.PodReadyModes, t.PodReady) {
		return fmt.Errorf("podReady: %q is none of %s", t.PodReady, strings.Join(cluster.PodReadyModes, ", "))
	}
	return nil
}
