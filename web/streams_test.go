package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heapInUse is the heap in use after two collections: the second empties
// what sync.Pools (net/http's buffers, echo's contexts) kept from the first.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// rawStream sends request (an event stream's, with Connection: close) on a
// new connection to host. An accepted stream's connection is returned
// open, past its header; a refused one is read and closed.
func rawStream(host, request string) (net.Conn, *http.Response, []byte, error) {
	conn, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("dial: %w", err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("send: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("answer: %w", err)
	}
	if resp.StatusCode == http.StatusOK {
		conn.SetDeadline(time.Time{})
		return conn, resp, nil, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	conn.Close()
	return nil, resp, body, nil
}

// streamRequest is the raw request for an event stream with c's cookies.
func streamRequest(c *client, path string) (host, request string) {
	u, _ := url.Parse(c.base)
	var cookies []string
	for _, ck := range c.hc.Jar.Cookies(u) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	return u.Host, "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nAccept: text/event-stream\r\n" +
		"Cookie: " + strings.Join(cookies, "; ") + "\r\nConnection: close\r\n\r\n"
}

// serve serves env's server on a loopback listener with Serve, as judge
// serve does, and points a new client at it.
func (e *testEnv) serve() *client {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	go e.srv.Serve(l)
	c := e.client()
	c.base = "http://" + l.Addr().String()
	return c
}

// 20,000 event streams on one live submission from one client, against
// the server's own Serve on loopback: the caps refuse all but a few with
// 429 and Retry-After, /healthz answers meanwhile, and once the streams
// close the heap comes back.
func TestEventStreamFlood(t *testing.T) {
	const flood = 20000
	// Open streams hold two descriptors here (both ends); the caps keep
	// them few, and a refused one is closed at once.
	if n := openFileLimit(); n != 0 && n < 1024 {
		t.Skipf("the open-file limit is %d; this test needs about 1024 (raise ulimit -Hn)", n)
	}
	fake := &fakeJudge{hold: make(chan struct{})}
	env := newEnv(t, Config{Workers: 1}, fake)
	c := env.serve()
	base := c.base
	sub := c.submit("171", "submit", "package main")
	host, request := streamRequest(c, sub.Events)

	before := heapInUse()

	var (
		mu       sync.Mutex
		open     []net.Conn
		refused  atomic.Int64
		problems []string
		next     atomic.Int64
		stop     atomic.Bool
	)
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		stop.Store(true)
	}
	defer func() {
		for _, conn := range open {
			conn.Close()
		}
	}()
	one := func() {
		conn, resp, body, err := rawStream(host, request)
		if err != nil {
			problem("%v", err)
			return
		}
		switch resp.StatusCode {
		case http.StatusOK:
			mu.Lock()
			open = append(open, conn)
			n := len(open)
			mu.Unlock()
			if n > streamsPerSubmission {
				problem("%d streams accepted on one submission; the cap is %d", n, streamsPerSubmission)
			}
		case http.StatusTooManyRequests:
			var msg map[string]string
			if resp.Header.Get("Retry-After") == "" || json.Unmarshal(body, &msg) != nil || !strings.Contains(msg["error"], "streams") {
				problem("a refusal without Retry-After or a reason: %q %s", resp.Header.Get("Retry-After"), body)
			}
			refused.Add(1)
		default:
			problem("stream answered %d %s", resp.StatusCode, body)
		}
	}

	// /healthz, every 100 ms while the flood runs and once after.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var slowest atomic.Int64
	health := func() {
		start := time.Now()
		resp, err := hc.Get(base + "/healthz")
		if err != nil {
			problem("healthz: %v", err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			problem("healthz: %d", resp.StatusCode)
		}
		if int64(took) > slowest.Load() {
			slowest.Store(int64(took))
		}
	}
	flooding := make(chan struct{})
	probes := make(chan struct{})
	go func() {
		defer close(probes)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-flooding:
				return
			case <-tick.C:
				health()
			}
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for next.Add(1) <= flood && !stop.Load() {
				one()
			}
		})
	}
	wg.Wait()
	close(flooding)
	<-probes
	health()
	during := heapInUse()
	t.Logf("%d stream requests in %v: %d open, %d refused; slowest /healthz %v; streams open on the server %d",
		min(next.Load()-16, flood), time.Since(start).Round(time.Millisecond), len(open), refused.Load(),
		time.Duration(slowest.Load()).Round(time.Millisecond), env.srv.streams.open())
	if len(problems) > 0 {
		t.Fatalf("after %d requests:\n%s", next.Load(), strings.Join(problems, "\n"))
	}
	if len(open) != streamsPerSubmission || refused.Load() != flood-streamsPerSubmission {
		t.Errorf("%d streams open and %d refused; want %d and %d", len(open), refused.Load(), streamsPerSubmission, flood-streamsPerSubmission)
	}
	if d := time.Duration(slowest.Load()); d >= time.Second {
		t.Errorf("/healthz took %v during the flood", d)
	}

	for _, conn := range open {
		conn.Close()
	}
	open = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for env.srv.streams.open() > 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := env.srv.streams.open(); n != 0 {
		t.Errorf("%d streams still counted 10 s after their clients left", n)
	}
	after := heapInUse()
	t.Logf("heap in use: %d MB before, %d MB with the streams open, %d MB after", before>>20, during>>20, after>>20)
	if after > before+100<<20 {
		t.Errorf("heap in use %d MB after the streams closed, %d MB before", after>>20, before>>20)
	}
	close(fake.hold)
}

// The caps count per submission, learner, address and in all, and a
// released stream leaves nothing behind in the gate's maps.
func TestStreamGate(t *testing.T) {
	g := newStreamGate()
	g.limit = 3 * streamsPerAddress
	refused := func(err error, why string) {
		t.Helper()
		he, ok := err.(interface{ Error() string })
		if !ok || err == nil {
			t.Fatalf("not refused; want %s", why)
		}
		if !strings.Contains(he.Error(), "429") || !strings.Contains(he.Error(), why) {
			t.Fatalf("refused with %q; want 429 and %q", he.Error(), why)
		}
	}
	for range streamsPerSubmission {
		if err := g.acquire(1, 1, "a"); err != nil {
			t.Fatal(err)
		}
	}
	refused(g.acquire(1, 1, "a"), "this submission")
	// The same learner's other submissions, up to the learner's cap.
	for i := range streamsPerLearner - streamsPerSubmission {
		if err := g.acquire(int64(2+i), 1, "a"); err != nil {
			t.Fatal(err)
		}
	}
	refused(g.acquire(99, 1, "a"), "you already have")
	// Other learners at the address, up to its cap.
	for i := range streamsPerAddress - streamsPerLearner {
		if err := g.acquire(int64(1000+i), int64(1000+i), "a"); err != nil {
			t.Fatal(err)
		}
	}
	refused(g.acquire(5000, 5000, "a"), "your network")
	// Other addresses, up to the cap in all.
	for i := range g.limit - streamsPerAddress {
		if err := g.acquire(int64(10000+i), int64(10000+i), fmt.Sprint("b", i)); err != nil {
			t.Fatal(err)
		}
	}
	refused(g.acquire(99999, 99999, "c"), "too many submissions")
	if g.open() != g.limit {
		t.Fatalf("%d open; want %d", g.open(), g.limit)
	}
	// Release everything: the maps are empty again.
	for range streamsPerSubmission {
		g.release(1, 1, "a")
	}
	for i := range streamsPerLearner - streamsPerSubmission {
		g.release(int64(2+i), 1, "a")
	}
	for i := range streamsPerAddress - streamsPerLearner {
		g.release(int64(1000+i), int64(1000+i), "a")
	}
	for i := range g.limit - streamsPerAddress {
		g.release(int64(10000+i), int64(10000+i), fmt.Sprint("b", i))
	}
	if g.open() != 0 || len(g.bySub)+len(g.byLrn)+len(g.byAddr) != 0 {
		t.Errorf("after release: %d open, maps of %d, %d, %d", g.open(), len(g.bySub), len(g.byLrn), len(g.byAddr))
	}
	// fit keeps the streams to half of the connections.
	g.fit(1000)
	if g.limit != 500 {
		t.Errorf("fit(1000): %d streams; want 500", g.limit)
	}
}

// With streams at their cap in all, which Serve fits under half of the
// connections it allows, /healthz still gets a connection and answers.
func TestStreamsLeaveConnectionsForHealth(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{})}
	env := newEnv(t, Config{Workers: 1}, fake)
	const conns = 16
	env.srv.connCap = conns
	c := env.serve()
	var open []net.Conn
	defer func() {
		for _, conn := range open {
			conn.Close()
		}
		close(fake.hold)
	}()
	a := c.submit("171", "submit", "package main // a")
	b := c.submit("171", "submit", "package main // b")
	for i := range conns / 2 {
		path := a.Events
		if i >= streamsPerSubmission {
			path = b.Events
		}
		conn, resp, body, err := rawStream(streamRequest(c, path))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %d %s", i+1, resp.StatusCode, body)
		}
		open = append(open, conn)
	}
	_, resp, body, err := rawStream(streamRequest(c, b.Events))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "too many submissions") {
		t.Fatalf("stream %d of a server allowing %d connections: %d %s", conns/2+1, conns, resp.StatusCode, body)
	}
	if r := c.get("/healthz"); r.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with the streams at their cap: %d %s", r.StatusCode, r.body)
	}
}
