package exercise

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// TestSeed derives a test's seed from the submission's, by name, so a
// test replays alone (judge test --test NAME) exactly as within the suite.
func TestSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := seed ^ h.Sum64()
	// splitmix64 finaliser
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// SeedFor is the test's seed within a submission seeded with seed.
func (t *Test) SeedFor(seed uint64) uint64 {
	if t.Seed != 0 {
		return t.Seed
	}
	return TestSeed(seed, t.Name)
}

// ScenarioCommand is the command that replays a scenario saved to a file.
func ScenarioCommand(ex *Exercise) string {
	return "judge test " + ex.ID() + " --scenario " + scenarioFile
}

// scenarioFile is the file name a replay command suggests for a scenario.
const scenarioFile = "scenario.yaml"

// ReplayCommand is the command that replays one test of an exercise.
func ReplayCommand(ex *Exercise, test string, seed uint64) string {
	return "judge test " + ex.ID() + " --seed " + strconv.FormatUint(seed, 10) + " --test " + shellQuote(test)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
