package judge

import (
	"strconv"
	"strings"
)

// generatedPrefix names generated scenarios: "generated 1" .. "generated K".
const generatedPrefix = "generated "

// isGeneratedName says whether a test name is kept for a generated scenario.
func isGeneratedName(name string) bool {
	n, ok := strings.CutPrefix(name, generatedPrefix)
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}
