//go:build !linux

package sandbox

import "errors"

// errLocked is lockFile's answer when another process holds the lock.
var errLocked = errors.New("sandbox: locked by another process")

// lockFile is a no-op where WarmLinker builds nothing.
func lockFile(file string) (unlock func(), err error) {
	return func() {}, nil
}
