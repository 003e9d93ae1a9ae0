package sandbox

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"
)

// BenchmarkBuild builds a learner's file (importing fmt, encoding/json,
// net/url and text/template, new code each time) directly with the
// compiler and linker over the prepared import configuration, and with
// the go command, alternating, and reports the median wall and CPU time
// of each (the CPU of every process of the build) and their ratios.
//
//	go test -run '^$' -bench Build -benchtime 10x ./sandbox/
func BenchmarkBuild(b *testing.B) {
	direct, err := NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	viaGo, _ := NewBuilder()
	viaGo.toolDir = "" // the go command builds
	src := "package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"net/url\"\n\t\"text/template\"\n)\n\nvar (\n\t_ = json.Marshal\n\t_ = fmt.Sprint\n\t_ = url.Parse\n\t_ = template.New\n)\n\nvar tag string\n\nfunc init() { tag = \"%d\" }\n"
	build := func(bl *Builder, i int) (time.Duration, time.Duration) {
		p := hostileProgram([]byte(src + "// " + strconv.Itoa(i) + " " + strconv.FormatInt(time.Now().UnixNano(), 10) + "\n"))
		start := time.Now()
		r, err := bl.build(context.Background(), p, DefaultBuildLimits())
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start), r.cpu
	}
	// Prepare both (the kit, the go command's cache), untimed.
	build(direct, -1)
	build(viaGo, -2)
	var dw, dc, gw, gc []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := []*Builder{direct, viaGo}
		if i%2 == 1 {
			order = []*Builder{viaGo, direct}
		}
		for _, bl := range order {
			w, c := build(bl, i)
			if bl == direct {
				dw, dc = append(dw, w), append(dc, c)
			} else {
				gw, gc = append(gw, w), append(gc, c)
			}
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(dw), "direct-wall-ms")
	b.ReportMetric(med(gw), "gocmd-wall-ms")
	b.ReportMetric(med(dw)/med(gw), "wall-ratio")
	b.ReportMetric(med(dc), "direct-cpu-ms")
	b.ReportMetric(med(gc), "gocmd-cpu-ms")
	b.ReportMetric(med(dc)/med(gc), "cpu-ratio")
	b.ReportMetric(0, "ns/op")
}
