//go:build !linux

package sandbox

import (
	"os"
	"os/exec"
)

// Elsewhere than Linux a build has no kernel limits and only the go
// command itself is ended on cancellation: the judge is served from Linux.

func startGroup(cmd *exec.Cmd)                             {}
func killGroup(pgid int) error                             { return nil }
func endGroup(pgid int)                                    {}
func waitExited(pid int)                                   {}
func limitGroup(pid int, lim BuildLimits, leaf bool) error { return nil }
func groupMembers(pgid int) []int                          { return nil }
func maxRSSBytes(ps *os.ProcessState) int64                { return 0 }
