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

// BenchmarkLinkOneP builds 171-sized learner code directly, with the
// linker on one P (as the judge runs it) and on as many as the machine
// has, alternating, and reports the median wall and CPU time of each
// whole build and their ratios (one P over many).
//
//	go test -run '^$' -bench LinkOneP -benchtime 20x ./sandbox/
func BenchmarkLinkOneP(b *testing.B) {
	one, err := NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	many, _ := NewBuilder()
	many.linkProcs = ""
	src := "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"slices\"\n\t\"time\"\n)\n\nvar (\n\t_ = context.Background\n\t_ = fmt.Sprint\n\t_ = slices.Sort[[]int]\n\t_ = time.Now\n)\n\nvar tag string\n\nfunc init() { tag = \"%d\" }\n"
	build := func(bl *Builder, i int) (time.Duration, time.Duration) {
		p := hostileProgram([]byte(src + "// " + strconv.Itoa(i) + " " + strconv.FormatInt(time.Now().UnixNano(), 10) + "\n"))
		start := time.Now()
		r, err := bl.build(context.Background(), p, DefaultBuildLimits())
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start), r.cpu
	}
	build(one, -1)
	build(many, -2)
	var ow, oc, mw, mc []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := []*Builder{one, many}
		if i%2 == 1 {
			order = []*Builder{many, one}
		}
		for _, bl := range order {
			w, c := build(bl, i)
			if bl == one {
				ow, oc = append(ow, w), append(oc, c)
			} else {
				mw, mc = append(mw, w), append(mc, c)
			}
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(ow), "one-p-wall-ms")
	b.ReportMetric(med(mw), "many-p-wall-ms")
	b.ReportMetric(med(ow)/med(mw), "wall-ratio")
	b.ReportMetric(med(oc), "one-p-cpu-ms")
	b.ReportMetric(med(mc), "many-p-cpu-ms")
	b.ReportMetric(med(oc)/med(mc), "cpu-ratio")
	b.ReportMetric(0, "ns/op")
}
