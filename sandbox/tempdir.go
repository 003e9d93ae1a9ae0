package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Build folders. Every build, kit, warm-up and linker build works in a
// temporary folder of its own and removes it when done; a process killed
// midway (a crash, a deploy's SIGKILL) cannot, and each build left
// behind holds megabytes. So a folder is named for the process that made
// it, and the first Builder of a later process removes the folders of
// processes that are gone, once the folder is older than any build may
// take (a process in another PID namespace sharing the folder cannot be
// seen, but its builds end within that time).

// tempPrefix starts the name of every build folder.
const tempPrefix = "ctrljudge-"

// tempDir makes a build folder of the given kind in dir ("" for the
// system's), named for this process.
func tempDir(dir, kind string) (string, error) {
	return os.MkdirTemp(dir, tempPrefix+kind+"-"+strconv.Itoa(os.Getpid())+"-")
}

// tempKinds are the kinds of build folder.
var tempKinds = []string{"build", "kit", "std", "linker"}

// staleTempAge is how old a folder of a process no longer alive must be
// to be removed: past the longest net over a build (maxWarmWall).
const staleTempAge = time.Hour

var sweepOnce sync.Once

// sweepTemp removes, once a process, the build folders in the system's
// temporary folder that processes no longer alive left behind.
func sweepTemp() {
	sweepOnce.Do(func() { sweepDeadFolders(os.TempDir(), staleTempAge) })
}

// sweepDeadFolders removes the build folders in dir of processes no
// longer alive, last changed at least age ago. Only folders of this user
// are touched, and RemoveAll follows no link.
func sweepDeadFolders(dir string, age time.Duration) {
	for _, kind := range tempKinds {
		dirs, _ := filepath.Glob(filepath.Join(dir, tempPrefix+kind+"-*-*"))
		for _, d := range dirs {
			rest := strings.TrimPrefix(filepath.Base(d), tempPrefix+kind+"-")
			pidText, _, _ := strings.Cut(rest, "-")
			pid, err := strconv.Atoi(pidText)
			if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) || !ownFolder(d, age) {
				continue
			}
			os.RemoveAll(d)
		}
	}
}
