package main

import (
	"runtime/debug"
	"testing"
)

// A judge test or check process collects late, unless the user set the
// collector through GOGC or GOMEMLIMIT.
func TestCollectLateHonoursTheEnvironment(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	collectLate()
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != -1 || l != cliHeapLimit {
		t.Errorf("collector at %d%%, limit %d; want off until %d", p, l, cliHeapLimit)
	}

	debug.SetGCPercent(100)
	t.Setenv("GOGC", "200")
	collectLate()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC set, yet the collector was changed to %d%%", p)
	}
}
