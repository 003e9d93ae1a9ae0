package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"ctrljudge/exercises"
	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/records/pgtest"
	"ctrljudge/judge/verdict"
)

// Markers in code steer fakeJudge: accept it, or panic.
const (
	solvedMarker = "// fake: accept"
	panicMarker  = "// fake: panic"
)

// fakeJudge judges by a marker in the code, reporting progress like the
// engine. With hold set, each judgement waits until released or cancelled.
type fakeJudge struct {
	mu       sync.Mutex
	hold     chan struct{} // closed to release held judgements
	started  chan struct{} // told when each judgement starts
	calls    int
	canceled int
	busy     int // the first busy judgements end not judged, as a starved machine's would
}

func (f *fakeJudge) Judge(ctx context.Context, s judge.Submission) *verdict.Verdict {
	f.mu.Lock()
	f.calls++
	hold, started, busy := f.hold, f.started, f.calls <= f.busy
	f.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if s.Progress != nil {
		s.Progress(verdict.Event{Phase: "compiling"})
	}
	if strings.Contains(string(s.Code), panicMarker) {
		panic("fake judge: " + panicMarker)
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			f.mu.Lock()
			f.canceled++
			f.mu.Unlock()
			return &verdict.Verdict{Version: 3, Status: verdict.StatusError, Outcome: verdict.OutcomeInternalError, Message: "cancelled"}
		}
	}
	if busy {
		return &verdict.Verdict{Version: 3, Status: verdict.StatusError, Outcome: verdict.OutcomeNotJudged, Message: "too busy", Tests: []verdict.TestResult{}}
	}
	return fakeVerdict(s)
}

// fakeVerdict accepts code holding solvedMarker and otherwise fails the
// second test, with a timeline, faults and a log full of HTML.
func fakeVerdict(s judge.Submission) *verdict.Verdict {
	v := &verdict.Verdict{Version: 3, Exercise: s.Exercise.Slug, ExerciseVersion: s.Exercise.Version,
		Engine: judge.EngineVersion, Mode: s.Mode, Seed: 1}
	names := []string{"scale-up", "restart-after-write"}
	if s.Mode == verdict.ModeRun {
		names = names[:1]
	}
	ok := strings.Contains(string(s.Code), solvedMarker)
	for i, name := range names {
		if s.Progress != nil {
			s.Progress(verdict.Event{Phase: "running", Index: i + 1, Total: len(names), Name: name})
		}
		t := verdict.TestResult{Name: name, Status: verdict.StatusPass, Seed: 1, Reconciles: 4, Writes: 3, DurationMs: 12}
		if !ok && i == 1 {
			t.Status, t.Oracle = verdict.StatusFail, "convergence"
			t.Message = "3 Pods wanted, 4 exist <b>after</b> the quiet phase"
			t.Faults = []string{"the controller restarted right after creating a Pod"}
			t.Replay = "judge test 171 reconcile-loop.go --test restart-after-write --seed 1"
			t.Output = "<script>alert(1)</script> created web-3"
			t.Trace = []verdict.TraceLine{{Step: 1, T: 0, Actor: "user", Event: "create Deployment web"},
				{Step: 2, T: 10, Actor: "controller", Event: "create Pod web-1"},
				{Step: 3, T: 12, Actor: "fault", Event: "restart"}}
			t.Timeline = []verdict.TimelinePoint{{Step: 1, Desired: 3, Mark: "user"}, {Step: 2, Desired: 3, Actual: 1, Mark: "write"},
				{Step: 3, Desired: 3, Actual: 1, Mark: "fault"}, {Step: 4, Desired: 3, Actual: 4, Ready: 2, Mark: "write"}}
		}
		if t.Status == verdict.StatusPass {
			v.Passed++
		} else {
			v.Failed++
		}
		v.Tests = append(v.Tests, t)
		if s.Progress != nil {
			s.Progress(verdict.Event{Phase: "test", Index: i + 1, Total: len(names), Test: &v.Tests[i]})
		}
	}
	v.Status, v.Outcome = verdict.StatusPass, verdict.OutcomeAccepted
	if v.Failed > 0 {
		v.Status, v.Outcome = verdict.StatusFail, verdict.OutcomeWrongAnswer
	}
	return v
}

func builtinCatalog(t testing.TB) *exercise.Catalog {
	t.Helper()
	cat, err := exercise.LoadCatalog(exercises.FS, judge.Checks)
	if err != nil {
		t.Fatalf("load built-in exercises: %v", err)
	}
	if _, err := cat.Find("171"); err != nil {
		t.Fatalf("built-in exercises: %v", err)
	}
	return cat
}

// openStore opens a SQLite store in dir, or a new PostgreSQL database for
// a test run under a name ending in /postgres (see TestOnPostgres).
func openStore(t testing.TB, dir string) *records.DB {
	t.Helper()
	target := filepath.Join(dir, "records.db")
	if strings.HasSuffix(t.Name(), "/postgres") {
		target = pgtest.URL(t)
	}
	db, err := records.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type testEnv struct {
	t    testing.TB
	srv  *Server
	db   *records.DB
	fake *fakeJudge
	ts   *httptest.Server
	cat  *exercise.Catalog
}

// newEnv starts a server with the real store and catalog and a fake judge.
func newEnv(t testing.TB, cfg Config, fake *fakeJudge) *testEnv {
	t.Helper()
	if fake == nil {
		fake = &fakeJudge{}
	}
	db := openStore(t, t.TempDir())
	cfg.Catalog = builtinCatalog(t)
	cfg.DB = db
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := newServer(cfg, fake)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		srv.Shutdown(context.Background(), time.Second)
	})
	return &testEnv{t: t, srv: srv, db: db, fake: fake, ts: ts, cat: cfg.Catalog}
}

// client is a browser stand-in: a cookie jar, and Sec-Fetch-Site:
// same-origin on every request unless told otherwise.
type client struct {
	t    testing.TB
	base string
	hc   *http.Client
}

func (e *testEnv) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: e.t, base: e.ts.URL, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type response struct {
	*http.Response
	body string
}

func (c *client) do(method, path, body string, header map[string]string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return response{resp, string(b)}
}

func (c *client) get(path string) response { return c.do(http.MethodGet, path, "", nil) }

func jsonBody(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// submit posts code and returns the 202 answer.
func (c *client) submit(ex, mode, code string) submitResponse {
	c.t.Helper()
	r := c.do(http.MethodPost, "/api/exercises/"+ex+"/submissions", jsonBody(map[string]string{"mode": mode, "code": code}), nil)
	if r.StatusCode != http.StatusAccepted {
		c.t.Fatalf("submit: %d %s", r.StatusCode, r.body)
	}
	var sr submitResponse
	if err := json.Unmarshal([]byte(r.body), &sr); err != nil {
		c.t.Fatalf("submit answer %q: %v", r.body, err)
	}
	return sr
}

type sseEvent struct {
	ID, Name string
	Data     map[string]any
}

// events reads a stream until its final event.
func (c *client) events(path string, header map[string]string) []sseEvent {
	c.t.Helper()
	return c.read(c.open(path, header))
}

// open opens an event stream; once it returns, the server has the job.
func (c *client) open(path string, header map[string]string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		c.t.Fatalf("events: content type %q", ct)
	}
	return resp
}

// read reads events until the final one.
func (c *client) read(resp *http.Response) []sseEvent {
	c.t.Helper()
	defer resp.Body.Close()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" {
				out = append(out, cur)
				if cur.Name == "done" || cur.Name == "not_judged" {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Name = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.Data); err != nil {
				c.t.Fatalf("event data %q: %v", line, err)
			}
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		c.t.Fatalf("events: %v", err)
	}
	c.t.Fatalf("stream ended without a final event; got %v", names(out))
	return nil
}

func names(evs []sseEvent) []string {
	var n []string
	for _, e := range evs {
		n = append(n, e.Name)
	}
	return n
}

var pageDataRE = regexp.MustCompile(`(?s)<script type="application/json" id="page-data">(.*?)</script>`)

func pageDataOf(t testing.TB, html string) pageData {
	t.Helper()
	m := pageDataRE.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no page data in page")
	}
	var d pageData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("page data %q: %v", m[1], err)
	}
	return d
}
