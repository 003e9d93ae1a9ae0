package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A build runs in a process group of its own, led by the go command, so
// that its compile and link children can be limited and ended with it.

// startGroup makes cmd lead a new process group whose every member a
// cancellation kills. os/exec kills only the go command by default; its
// compile and link children would run on.
func startGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
}

// killGroup sends SIGKILL to every process of the group pgid.
func killGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// waitExited blocks until the process pid has exited, without reaping it:
// while the leader is a zombie its pid, and so the group id, cannot be
// reused, which makes a later killGroup safe.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// limitGroup sets the kernel's limits on the go command and on any
// process it has already started. Limits are inherited at fork, so the
// children the go command starts later get them too; the scan of the
// group closes the window between Start and the first Prlimit, in which
// a go command scheduled before us could already have forked. A leaf (the
// compiler, the linker: they start no process) needs no scan.
func limitGroup(pid int, lim BuildLimits, leaf bool) error {
	if err := setLimits(pid, lim); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // already gone: nothing left to limit
		}
		return err
	}
	if leaf {
		return nil
	}
	for _, p := range groupMembers(pid) {
		if p != pid {
			setLimits(p, lim) // a member that exited meanwhile needs none
		}
	}
	return nil
}

func setLimits(pid int, lim BuildLimits) error {
	set := func(res int, v uint64) error {
		if v == 0 {
			return nil
		}
		// Only lowering needs no privilege: never ask above the hard
		// limit the judge itself was given.
		var old unix.Rlimit
		if err := unix.Prlimit(pid, res, nil, &old); err != nil {
			return err
		}
		v = min(v, old.Max)
		return unix.Prlimit(pid, res, &unix.Rlimit{Cur: v, Max: v}, nil)
	}
	// Soft and hard limit alike: at RLIMIT_CPU the kernel sends SIGKILL
	// (the Go runtime ignores SIGXCPU, the soft limit's signal).
	if err := set(unix.RLIMIT_CPU, uint64((lim.CPU+time.Second-1)/time.Second)); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_DATA, uint64(lim.MemoryBytes)); err != nil {
		return err
	}
	return set(unix.RLIMIT_FSIZE, uint64(lim.FileBytes))
}

// adoptsOrphans says whether the kernel gives this process the orphans of
// its descendants: as init, or as a child subreaper.
var adoptsOrphans = sync.OnceValue(func() bool {
	if os.Getpid() == 1 {
		return true
	}
	var on uintptr
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0)
	return err != nil || on != 0 // unknown: scan, as a reaper must
})

// groupMembers lists the processes whose process group is pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := procStat(pid)
		if ok && st.pgid == pgid {
			out = append(out, pid)
		}
	}
	return out
}

type procStatus struct {
	state      byte
	ppid, pgid int
}

// procStat reads /proc/pid/stat. The command name, field 2, may hold
// spaces and parentheses, so fields are counted after its last ')'.
func procStat(pid int) (procStatus, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStatus{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStatus{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procStatus{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return procStatus{state: f[0][0], ppid: ppid, pgid: pgid}, true
}

// maxRSSBytes is the peak resident memory of the largest process of the
// finished tree (ru_maxrss of a waited-for child covers its descendants).
func maxRSSBytes(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// endGroup kills every process of the group pgid, whose leader has exited
// but is not reaped yet. Children orphaned by a kill of the go command
// were given to init, or to us when we are init (a judge in a container
// without one) or a subreaper: those we reap, or they would stay zombies.
// Otherwise none is ours, and the kill is all (no scan of /proc).
func endGroup(pgid int) {
	if !adoptsOrphans() {
		killGroup(pgid)
		return
	}
	members := groupMembers(pgid)
	killGroup(pgid)
	me := os.Getpid()
	for _, m := range members {
		if st, ok := procStat(m); m != pgid && ok && st.ppid == me {
			var ws unix.WaitStatus
			unix.Wait4(m, &ws, 0, nil)
		}
	}
}
