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
	benchBuilders(b, src, direct, viaGo, "direct", "gocmd")
}

// BenchmarkLinkOneP builds small learner code directly, with the linker
// on one P (as the judge runs it) and on as many as the machine has,
// alternating, and reports the median wall and CPU time of each whole
// build and their ratios (one P over many).
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
	benchBuilders(b, src, one, many, "one-p", "many-p")
}

// BenchmarkCompilerCollector builds a learner's file directly, with the
// compiler's collector set as the judge sets it (compileGCEnv) and left
// at its defaults, alternating, and reports the median wall and CPU time
// of each whole build and their ratios (the judge's over the defaults).
//
//	go test -run '^$' -bench CompilerCollector -benchtime 20x ./sandbox/
func BenchmarkCompilerCollector(b *testing.B) {
	set, err := NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	defaults, _ := NewBuilder()
	defaults.compileEnv = nil
	src := "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"slices\"\n\t\"strings\"\n\t\"time\"\n)\n\ntype item struct {\n\tname string\n\tat   time.Time\n}\n\nfunc pick(ctx context.Context, items []item, prefix string) []string {\n\tvar out []string\n\tfor _, it := range items {\n\t\tif ctx.Err() != nil {\n\t\t\tbreak\n\t\t}\n\t\tif strings.HasPrefix(it.name, prefix) {\n\t\t\tout = append(out, fmt.Sprintf(\"%s@%d\", it.name, it.at.Unix()))\n\t\t}\n\t}\n\tslices.Sort(out)\n\treturn out\n}\n\nvar _ = pick\n\nvar tag string\n\nfunc init() { tag = \"%d\" }\n"
	benchBuilders(b, src, set, defaults, "set", "defaults")
}

// benchBuilders builds src, new code each time, with first and second,
// alternating which goes first, and reports the median wall and CPU time
// (of every process of the build) of each, named by their labels, and
// the ratios of first to second.
func benchBuilders(b *testing.B, src string, first, second *Builder, firstLabel, secondLabel string) {
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
	build(first, -1)
	build(second, -2)
	var fw, fc, sw, sc []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := []*Builder{first, second}
		if i%2 == 1 {
			order = []*Builder{second, first}
		}
		for _, bl := range order {
			w, c := build(bl, i)
			if bl == first {
				fw, fc = append(fw, w), append(fc, c)
			} else {
				sw, sc = append(sw, w), append(sc, c)
			}
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(fw), firstLabel+"-wall-ms")
	b.ReportMetric(med(sw), secondLabel+"-wall-ms")
	b.ReportMetric(med(fw)/med(sw), "wall-ratio")
	b.ReportMetric(med(fc), firstLabel+"-cpu-ms")
	b.ReportMetric(med(sc), secondLabel+"-cpu-ms")
	b.ReportMetric(med(fc)/med(sc), "cpu-ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLinkerCollector builds a learner's file directly, with the
// linker's collector set as the judge sets it (linkGCEnv) and left at its
// defaults, both on one P, alternating, and reports the median wall and
// CPU time of each whole build and their ratios (the judge's over the
// defaults).
//
//	go test -run '^$' -bench LinkerCollector -benchtime 20x ./sandbox/
func BenchmarkLinkerCollector(b *testing.B) {
	set, err := NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	defaults, _ := NewBuilder()
	defaults.linkEnv = nil
	src := "package main\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"slices\"\n\t\"strings\"\n\t\"time\"\n)\n\nvar (\n\t_ = context.Background\n\t_ = json.Marshal\n\t_ = fmt.Sprint\n\t_ = slices.Sort[[]int]\n\t_ = strings.HasPrefix\n\t_ = time.Now\n)\n\nvar tag string\n\nfunc init() { tag = \"%d\" }\n"
	benchBuilders(b, src, set, defaults, "set", "defaults")
}
