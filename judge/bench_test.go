package judge

import (
	"context"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"ctrljudge/exercises"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

// Submit-to-verdict latency for exercise 171's reference solution, in
// submit mode (every test, faults included). Run with a fixed count, e.g.
//
//	go test -run '^$' -bench Submit -benchtime 20x ./judge/
//
// Cold: a new engine and a module never built before (the Go build cache
// and the standard library are warm: that is how a server runs).
// Warm: a running engine that has judged benchWarmups submissions, and a
// new one (new code, so a new build and a new module to compile).
// Resubmit: the same code again, served from the content-hash cache.
// Besides latency: cpu-ms/verdict, the CPU time of the process and of the
// compilers and linkers it ran; judge-cpu-ms/verdict, the process's alone;
// and faults/verdict, its minor page faults.

func benchSubmit(b *testing.B, compiler, fresh, same bool) {
	ex, err := exercise.LoadCatalog(exercises.FS, Checks)
	if err != nil {
		b.Fatal(err)
	}
	e, err := ex.Find("171")
	if err != nil {
		b.Fatal(err)
	}
	eng, err := NewEngine(Options{Compiler: compiler})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	// Warm the toolchain, and the process, outside the measurement: a
	// server that has judged a few submissions has its heap at the size
	// it keeps (the compiled modules it holds, the memory the collector
	// reuses); before that, much of a verdict's time is the kernel handing
	// the heap fresh pages.
	eng.Judge(context.Background(), Submission{Exercise: e, Code: e.Solution})
	if !fresh {
		for i := 0; i < benchWarmups; i++ {
			eng.Judge(context.Background(), Submission{Exercise: e, Code: newCode(e.Solution, -1-i)})
		}
	}
	var lat, build, compile, run []time.Duration
	b.ResetTimer()
	cpu0, faults0 := usage()
	self0 := selfCPU()
	for i := 0; i < b.N; i++ {
		code := e.Solution
		if !same {
			code = newCode(e.Solution, i)
		}
		if fresh {
			eng.Close()
			if eng, err = NewEngine(Options{Compiler: compiler}); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		v := eng.Judge(context.Background(), Submission{Exercise: e, Code: code})
		lat = append(lat, time.Since(start))
		build = append(build, time.Duration(v.Timings.BuildMs)*time.Millisecond)
		compile = append(compile, time.Duration(v.Timings.CompileMs)*time.Millisecond)
		run = append(run, time.Duration(v.Timings.RunMs)*time.Millisecond)
		if v.Outcome != verdict.OutcomeAccepted {
			b.Fatalf("reference solution: %s %s", v.Outcome, v.FirstFailure().Message)
		}
	}
	b.StopTimer()
	cpu, faults := usage()
	b.ReportMetric(float64((selfCPU()-self0).Milliseconds())/float64(b.N), "judge-cpu-ms/verdict")
	b.ReportMetric(float64((cpu-cpu0).Milliseconds())/float64(b.N), "cpu-ms/verdict")
	b.ReportMetric(float64(faults-faults0)/float64(b.N), "faults/verdict")
	reportLatency(b, lat)
	b.ReportMetric(median(build), "build-ms")
	b.ReportMetric(median(compile), "compile-ms")
	b.ReportMetric(median(run), "run-ms")
}

// usage is the CPU time of this process and of the compilers and linkers
// it ran (the children it waited for), and this process's minor page
// faults: fresh memory the kernel had to hand over.
func usage() (cpu time.Duration, minorFaults int64) {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime), self.Minflt
}

// selfCPU is the CPU time of this process alone: the judging, without
// the compilers and linkers.
func selfCPU() time.Duration {
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano())
}

func median(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2].Milliseconds())
}

func reportLatency(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1)+0.5)].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// benchWarmups is how many new submissions a warm engine judges before
// it is measured: enough for its heap to stop growing (measured with
// runtime/metrics: 171's solution, about a dozen).
const benchWarmups = 12

// newCode is code with a string of its own set at init: a new module, as
// a new submission's is (a comment alone would leave the module as it
// was, and wazero's compile cached).
func newCode(code []byte, i int) []byte {
	code = append([]byte(nil), code...)
	return append(code, "\nvar benchTag string\n\nfunc init() { benchTag = \"submission "+strconv.Itoa(i)+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\" }\n"...)
}

func BenchmarkSubmitCold(b *testing.B)         { benchSubmit(b, false, true, false) }
func BenchmarkSubmitWarm(b *testing.B)         { benchSubmit(b, false, false, false) }
func BenchmarkSubmitWarmCompiler(b *testing.B) { benchSubmit(b, true, false, false) }
func BenchmarkResubmitIdentical(b *testing.B)  { benchSubmit(b, false, false, true) }
