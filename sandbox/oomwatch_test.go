package sandbox

import "testing"

// The runtime writes its report in pieces, and the lines around it are
// any length; a report counts only if no output flood came first.
func TestOOMWatchReadsTheRuntimesReport(t *testing.T) {
	for _, c := range []struct {
		name    string
		writes  []string
		flooded bool // the output limit was passed before the writes
		want    bool
	}{
		{"whole", []string{"fatal error: out of memory\n"}, false, true},
		{"in pieces", []string{"goroutine 1 [running]:\nfatal ", "error: ", "out of memory", "\n", "runtime stack:\n"}, false, true},
		{"the failed allocation", []string{"runtime: out of memory: cannot allocate 524288-byte block (13729792 in use)\n"}, false, true},
		{"runtime: prefix", []string{"fatal error: runtime: out of memory\n"}, false, true},
		{"after a long line", []string{string(make([]byte, 500)), "\nfatal error: out of memory\n"}, false, true},
		{"inside a long line", []string{"xx fatal error: out of memory\n"}, false, false},
		{"not yet a line", []string{"fatal error: out of memory"}, false, false},
		{"another fatal error", []string{"fatal error: all goroutines are asleep - deadlock!\n"}, false, false},
		{"after a flood", []string{"fatal error: out of memory\n"}, true, false},
	} {
		inst := &Instance{flooded: c.flooded}
		inst.oom.inst = inst
		for _, w := range c.writes {
			if n, err := inst.oom.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("%s: Write = %d, %v", c.name, n, err)
			}
		}
		if inst.oom.seen != c.want {
			t.Errorf("%s: seen = %v, want %v", c.name, inst.oom.seen, c.want)
		}
	}
}
