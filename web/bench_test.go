package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/verdict"
)

// BenchmarkExercisePage is the server's time for the exercise page of a
// learner with a draft and a history.
func BenchmarkExercisePage(b *testing.B) {
	env := newEnv(b, Config{}, nil)
	c := env.client()
	c.events(c.submit("171", "submit", "package main").Events, nil)
	r := c.get("/exercises/171")
	if r.StatusCode != http.StatusOK {
		b.Fatalf("exercise page: %d", r.StatusCode)
	}
	cookies := r.Request.Header.Get("Cookie")
	h := env.srv.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/exercises/171", nil)
		req.Header.Set("Cookie", cookies)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("exercise page: %d", w.Code)
		}
	}
}

// BenchmarkAssetBytes reports what a first visit downloads: every script
// and stylesheet, gzipped (the target is at most 300 KB).
func BenchmarkAssetBytes(b *testing.B) {
	a, err := loadAssets()
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		n = a.gzipBytes()
	}
	b.ReportMetric(float64(n), "js+css-gzip-bytes")
	b.ReportMetric(float64(len(a.byName["editor.js"].gz)), "editor-gzip-bytes")
}

// BenchmarkSubmitLatency submits the reference solution through HTTP with
// the real engine and store, and times each submission from the POST to
// its final event, with 1 and with 50 clients submitting at once (one
// round of submissions per iteration). With
// code=same every submission is the same file, which the engine answers
// from its verdict cache; with code=edited each one carries its own
// comment, so each is built and judged (the compiled module still comes
// from the cache, as comments do not change it); with code=new each one
// also sets a string of its own in an init function, so every module is
// new: built, compiled by wazero and run, as a class's submissions are.
// Before the clock starts the server judges benchWarmups new submissions.
// Besides latency it reports throughput: verdicts/s, the same per core
// (GOMAXPROCS), and the CPU time per verdict of the whole process and the
// compilers and linkers it ran (cpu-ms/verdict), which carries to a
// machine of any size, and the compilers' and linkers' share of it
// (toolchain-cpu-ms/verdict).
func BenchmarkSubmitLatency(b *testing.B) {
	for _, code := range []string{"same", "edited", "new"} {
		for _, clients := range []int{1, 50} {
			b.Run("code="+code+"/clients="+strconv.Itoa(clients), func(b *testing.B) { benchSubmit(b, clients, code) })
		}
	}
}

// forwardedFor sends requests as the proxy does, naming the client.
type forwardedFor struct{ addr string }

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.addr)
	return http.DefaultTransport.RoundTrip(r)
}

// benchWarmups is how many new submissions the server judges before it
// is measured: enough for its heap to stop growing (171's solution, about
// a dozen, measured with runtime/metrics).
const benchWarmups = 12

// cpuTime is the CPU time this process and its waited-for children (the
// compilers and linkers) used, and the children's share of it.
func cpuTime() (all, kids time.Duration) {
	var s, k syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &k)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	kids = tv(k.Utime) + tv(k.Stime)
	return tv(s.Utime) + tv(s.Stime) + kids, kids
}

func benchSubmit(b *testing.B, clients int, mode string) {
	data := b.TempDir()
	db := openStore(b, data)
	cat := builtinCatalog(b)
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(data, "cache")})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	// The clients are a class behind the server's reverse proxy, each
	// on an address of its own, so the limits per network do not turn
	// them away.
	proxy, _ := ParseTrustedProxies("127.0.0.1")
	srv, err := New(Config{DB: db, Catalog: cat, Engine: eng, QueueCap: 64, TrustedProxies: proxy,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer func() {
		ts.Close()
		srv.Shutdown(context.Background(), time.Minute)
	}()
	env := &testEnv{t: b, srv: srv, db: db, ts: ts, cat: cat}
	ex, _ := cat.Find("171")
	code := string(ex.Solution)

	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = env.client()
		cs[i].hc.Timeout = 10 * time.Minute // a submission may wait behind the other 49
		cs[i].hc.Transport = forwardedFor{fmt.Sprintf("198.51.100.%d", i+1)}
	}
	var n atomic.Int64
	once := func(c *client, mode string) time.Duration {
		src := code
		switch mode {
		case "edited":
			src += fmt.Sprintf("\n// edit %d\n", n.Add(1))
		case "new":
			src += fmt.Sprintf("\nvar benchTag string\n\nfunc init() { benchTag = \"new %d %d\" }\n", n.Add(1), time.Now().UnixNano())
		}
		start := time.Now()
		evs := c.events(c.submit("171", "submit", src).Events, nil)
		d := time.Since(start)
		if last := evs[len(evs)-1]; last.Data["outcome"] != string(verdict.OutcomeAccepted) {
			b.Fatalf("reference solution: %s %v", last.Name, last.Data["outcome"])
		}
		return d
	}
	once(cs[0], mode) // build and compile once: the cache is warm from here
	// And judge new code a few times, as a server that has been up a while
	// has: its heap at the size it keeps, rather than still asking the
	// kernel for fresh pages (judge's benchWarmups).
	for range benchWarmups {
		once(cs[0], "new")
	}

	// Each iteration is one round: every client submits at once and waits
	// for its verdict, so the clients really are concurrent whatever b.N is.
	lat := make([]time.Duration, 0, b.N*clients)
	var mu sync.Mutex
	b.ResetTimer()
	start := time.Now()
	cpu0, kids0 := cpuTime()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() {
				d := once(c, mode)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	cpu, kids := cpuTime()
	cpu, kids = cpu-cpu0, kids-kids0
	b.StopTimer()

	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "verdicts/s")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds()/float64(runtime.GOMAXPROCS(0)), "verdicts/s/core")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(len(lat)), "cpu-ms/verdict")
	b.ReportMetric(float64(kids.Milliseconds())/float64(len(lat)), "toolchain-cpu-ms/verdict")
}
