package sandbox

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errLocked is lockFile's answer when another process holds the lock.
var errLocked = errors.New("sandbox: locked by another process")

// lockFile takes an exclusive lock on file, creating it, for processes
// that share a folder, or returns errLocked at once. The kernel drops
// the lock of a process that dies.
func lockFile(file string) (unlock func(), err error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
