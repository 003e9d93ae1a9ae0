package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
)

// BenchmarkCLIvsGoBuild sets a whole `judge test 171 FILE` (the CLI as a
// learner runs it: process start, build, compile, every test) beside the
// floor, a plain `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
// -trimpath` of the same new code in a `judge start` workspace: nothing
// can judge Go code it has not built. Each iteration writes new code and
// runs both, alternating which goes first; the medians and their ratios
// (wall and CPU, the CPU of each process and its children) are reported
// side by side, so a busy machine slows both alike. Run with
//
//	go test -run '^$' -bench CLIvsGoBuild -benchtime 10x ./cmd/judge/
func BenchmarkCLIvsGoBuild(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("CPU figures of child processes are read from Linux's rusage")
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "judge")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building the CLI: %v\n%s", err, out)
	}
	ws := filepath.Join(tmp, "ws")
	env := append(os.Environ(), "CTRLJUDGE_CACHE="+filepath.Join(tmp, "cache"), "NO_COLOR=1")
	if out, err := runIn(tmp, env, bin, "start", "171", "--dir", ws); err != nil {
		b.Fatalf("judge start: %v\n%s", err, out)
	}
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		b.Fatal(err)
	}
	ex, err := cat.Find("171")
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(ws, ex.FileName())
	code := exercise.LearnerSource(ex.Solution)
	write := func(tag string) {
		src := append(append([]byte(nil), code...), "\n// "+tag+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n"...)
		if err := os.WriteFile(file, src, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	floorEnv := append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	floor := func() (time.Duration, time.Duration) {
		write("floor")
		return timed(b, ws, floorEnv, "go", "build", "-buildmode=c-shared", "-trimpath", "-o", filepath.Join(tmp, "floor.wasm"), ".")
	}
	cli := func() (time.Duration, time.Duration) {
		write("cli")
		return timed(b, ws, env, bin, "test", "171", ex.FileName())
	}
	// Once each, untimed: the first run prepares the CLI's cache (the
	// toolchain kit) as `judge start` users' first run does.
	floor()
	cli()
	var fw, fc, cw, cc []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			w, c := floor()
			fw, fc = append(fw, w), append(fc, c)
			w, c = cli()
			cw, cc = append(cw, w), append(cc, c)
		} else {
			w, c := cli()
			cw, cc = append(cw, w), append(cc, c)
			w, c = floor()
			fw, fc = append(fw, w), append(fc, c)
		}
	}
	b.StopTimer()
	mfw, mfc, mcw, mcc := med(fw), med(fc), med(cw), med(cc)
	b.ReportMetric(ms(mfw), "floor-wall-ms")
	b.ReportMetric(ms(mcw), "cli-wall-ms")
	b.ReportMetric(ms(mcw)/ms(mfw), "wall-ratio")
	b.ReportMetric(ms(mfc), "floor-cpu-ms")
	b.ReportMetric(ms(mcc), "cli-cpu-ms")
	b.ReportMetric(ms(mcc)/ms(mfc), "cpu-ratio")
	b.ReportMetric(0, "ns/op")
}

// timed runs a command and returns its wall time and the CPU time of it
// and its children.
func timed(b *testing.B, dir string, env []string, name string, args ...string) (wall, cpu time.Duration) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	wall = time.Since(start)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func runIn(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd.CombinedOutput()
}

func med(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
