package sandbox

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// processAlive reports whether process pid exists (a process of another
// user included).
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// ownFolder reports whether d is a folder, not a link, of this process's
// user, last changed at least age ago.
func ownFolder(d string, age time.Duration) bool {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < age {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
