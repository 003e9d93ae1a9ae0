package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/queue"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
)

func TestPages(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	total := strconv.Itoa(len(env.cat.Exercises))
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"/", 200, []string{"Controller exercises", "The reconcile loop", `<strong>0</strong> / ` + total + ` solved`, "not started", `href="/chapters/controller-pattern"`}},
		{"/?difficulty=hard", 200, []string{`data-difficulty="medium" data-status="not started" data-search="171 The reconcile loop`, ` hidden>`}},
		{"/chapters/controller-pattern", 200, []string{"The controller pattern", "Exercises in this chapter", `href="/exercises/171"`}},
		{"/chapters/nope", 404, []string{"no such chapter"}},
		{"/exercises/171", 200, []string{"171. The reconcile loop", `id="editor"`, `id="page-data"`, "judge test 171 --run"}},
		{"/exercises/reconcile-loop", 200, []string{"171. The reconcile loop"}},
		{"/exercises/9999", 404, []string{"no such exercise"}},
		{"/exercises/..%2f..%2fetc", 404, []string{"no such exercise"}},
		{"/exercises/171/history", 200, []string{"No submissions yet"}},
		{"/exercises/9999/history", 404, nil},
		{"/signin?next=/exercises/171", 200, []string{"Join a class", `name="next" value="/exercises/171"`}},
		{"/healthz", 200, []string{`"ok":true`}},
		{"/nowhere", 404, nil},
	} {
		r := c.get(tc.path)
		if r.StatusCode != tc.code {
			t.Errorf("GET %s: status %d, want %d", tc.path, r.StatusCode, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("GET %s: body lacks %q", tc.path, w)
			}
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q", tc.path, csp)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", tc.path)
		}
	}
}

func TestExercisePageData(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	r := c.get("/exercises/171")
	d := pageDataOf(t, r.body)
	ex, _ := env.cat.Find("171")
	if d.ID != "171" || d.Slug != ex.Slug || d.Starter != string(ex.Starter) || d.Draft != string(ex.Starter) || d.Solved {
		t.Errorf("page data %+v", d)
	}
	if strings.Contains(r.body, "<script>") && !strings.Contains(r.body, `<script type="application/json"`) {
		t.Error("inline script in page")
	}
	// A page view makes no learner (a crawler would fill the table), nor
	// does a draft (the browser keeps it); the first submission does.
	sessionOf := func(r response) *http.Cookie {
		for _, ck := range r.Cookies() {
			if ck.Name == sessionCookie {
				return ck
			}
		}
		return nil
	}
	if ck := sessionOf(r); ck != nil {
		t.Fatalf("a page view set a session: %+v", ck)
	}
	w := c.do(http.MethodPut, "/api/exercises/171/draft", jsonBody(map[string]string{"code": "package main // mine"}), nil)
	if ck := sessionOf(w); w.StatusCode != http.StatusOK || ck != nil || !strings.Contains(w.body, `"stored":false`) {
		t.Fatalf("draft save without a session: %d %s, session cookie %+v", w.StatusCode, w.body, ck)
	}
	w = c.do(http.MethodPost, "/api/exercises/171/submissions", jsonBody(map[string]string{"mode": "run", "code": "package main // mine"}), nil)
	session := sessionOf(w)
	if w.StatusCode != http.StatusAccepted || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure {
		t.Fatalf("first submission: %d, session cookie %+v", w.StatusCode, session)
	}
	if d := pageDataOf(t, c.get("/exercises/171").body); d.Draft != "package main // mine" {
		t.Fatalf("draft after the first submission: %q", d.Draft)
	}
}

// The explanation and the reference solution never reach a learner who has
// not passed with Submit.
func TestSolutionLockedUntilAccepted(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	ex, _ := env.cat.Find("171")
	explanation, solution := string(env.srv.docs.explanation[ex.Slug]), string(env.srv.docs.solution[ex.Slug])
	if len(explanation) < 50 || len(solution) < 50 {
		t.Fatalf("exercise 171 has a short explanation or solution: %q %q", explanation, solution)
	}
	c := env.client()
	locked := func(when string) {
		t.Helper()
		r := c.get("/exercises/171")
		if strings.Contains(r.body, explanation) || strings.Contains(r.body, solution) || strings.Contains(r.body, "solution-code") {
			t.Errorf("%s: exercise page holds the solution", when)
		}
		if !strings.Contains(r.body, `data-locked="true"`) {
			t.Errorf("%s: solution tab not locked", when)
		}
		if r := c.get("/exercises/171/solution"); r.StatusCode != http.StatusForbidden || strings.Contains(r.body, "solution-code") {
			t.Errorf("%s: GET solution: %d %.200s", when, r.StatusCode, r.body)
		}
	}
	locked("fresh")
	// A passing Run is not a pass; nor is a failing Submit.
	for _, s := range []struct{ mode, code string }{{"run", solvedMarker}, {"submit", "package main"}} {
		sr := c.submit("171", s.mode, s.code)
		c.events(sr.Events, nil)
		locked("after " + s.mode)
	}
	// Another learner's pass unlocks nothing for this one.
	other := env.client()
	other.events(other.submit("171", "submit", solvedMarker).Events, nil)
	locked("after another learner passed")

	evs := c.events(c.submit("171", "submit", solvedMarker).Events, nil)
	if done := evs[len(evs)-1]; done.Data["solved"] != true {
		t.Fatalf("accepted submit: done event %v", done.Data)
	}
	r := c.get("/exercises/171")
	if !strings.Contains(r.body, explanation) || !strings.Contains(r.body, solution) || !strings.Contains(r.body, `data-locked="false"`) {
		t.Error("solved: exercise page lacks the solution")
	}
	if r := c.get("/exercises/171/solution"); r.StatusCode != 200 || !strings.Contains(r.body, solution) {
		t.Errorf("solved: GET solution: %d", r.StatusCode)
	}
	if r := c.get("/"); !strings.Contains(r.body, `<strong>1</strong> / `+strconv.Itoa(len(env.cat.Exercises))+` solved`) || !strings.Contains(r.body, "✓ solved") {
		t.Error("home page does not count the solved exercise")
	}
}

func TestSubmitStreamsProgress(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 1)}
	env := newEnv(t, Config{}, fake)
	c := env.client()
	sr := c.submit("171", "submit", "package main // fails")
	if sr.ID <= 0 || sr.Events != fmt.Sprintf("/api/submissions/%d/events", sr.ID) {
		t.Fatalf("submit answer %+v", sr)
	}
	<-fake.started
	resp := c.open(sr.Events, nil)
	close(fake.hold)
	evs := c.read(resp)
	want := []string{"queued", "compiling", "running", "test", "running", "test", "done"}
	if got := names(evs); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i, ev := range evs {
		if ev.ID != env.srv.epoch+"."+strconv.Itoa(i) {
			t.Errorf("event %d has id %q", i, ev.ID)
		}
	}
	fail := evs[5].Data["html"].(string)
	for _, w := range []string{`class="card fail faulted"`, "<details open>", "Convergence", "restarted right after creating a Pod",
		"judge test 171 reconcile-loop.go --test restart-after-write --seed 1", `<svg class="timeline"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;after&lt;/b&gt;"} {
		if !strings.Contains(fail, w) {
			t.Errorf("failing card lacks %q", w)
		}
	}
	if strings.Contains(fail, "<script>") || strings.Contains(fail, "<b>after") {
		t.Error("failing card holds unescaped learner output")
	}
	done := evs[len(evs)-1].Data
	if done["outcome"] != "wrong_answer" || done["passed"] != 1.0 || done["total"] != 2.0 || done["solved"] != false {
		t.Errorf("done %v", done)
	}
	if h := done["html"].(string); !strings.Contains(h, "Wrong answer") || strings.Count(h, `class="card `) != 2 {
		t.Errorf("done html %.300s", h)
	}
	sub, err := env.db.Submission(context.Background(), sr.ID)
	if err != nil || sub.State != "done" || sub.Outcome != verdict.OutcomeWrongAnswer || sub.Passed != 1 || sub.Total != 2 {
		t.Fatalf("stored %+v, %v", sub, err)
	}
	// The history lists it; the page shows it as the latest result.
	if r := c.get("/exercises/171/history"); !strings.Contains(r.body, "Wrong answer") || !strings.Contains(r.body, "1/2") {
		t.Errorf("history %s", r.body)
	}
	if r := c.get("/exercises/171"); !strings.Contains(r.body, "Your latest result") || !strings.Contains(r.body, `class="card fail`) {
		t.Error("exercise page lacks the latest result")
	}
	// The stream replays from the store once the job is gone, and resumes
	// after Last-Event-ID.
	again := c.events(sr.Events, map[string]string{"Last-Event-ID": "3"})
	if h, _ := again[0].Data["html"].(string); len(again) != 1 || again[0].Name != "done" ||
		!strings.Contains(h, "Wrong answer") || strings.Count(h, `class="card `) != 2 {
		t.Errorf("replay %v", names(again))
	}
}

func TestStreamResumesAfterLastEventID(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 1)}
	env := newEnv(t, Config{Workers: 1}, fake)
	c := env.client()
	sr := c.submit("171", "run", "package main")
	<-fake.started
	// An id from an earlier run of the server resumes nothing.
	stale := c.open(sr.Events, map[string]string{"Last-Event-ID": "old.5"})
	resp := c.open(sr.Events, map[string]string{"Last-Event-ID": env.srv.epoch + ".0"})
	close(fake.hold)
	evs := c.read(resp)
	if evs[0].ID != env.srv.epoch+".1" || evs[0].Name != "compiling" || names(evs)[len(evs)-1] != "done" {
		t.Errorf("resumed stream %v from id %s", names(evs), evs[0].ID)
	}
	if all := c.read(stale); all[0].Name != "queued" || len(all) != len(evs)+1 {
		t.Errorf("stream with a stale id: %v", names(all))
	}
}

func TestSubmitRefusals(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	c.get("/") // a session
	path := "/api/exercises/171/submissions"
	big := strings.Repeat("x", 200<<10)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		code   int
		want   string
	}{
		{"oversize body", "POST", path, jsonBody(map[string]string{"mode": "run", "code": big}), nil, 413, ""},
		{"code over the judge's cap", "POST", path, jsonBody(map[string]string{"mode": "run", "code": strings.Repeat("x", maxCodeSize+1)}), nil, 413, "at most 64 KiB"},
		{"bad mode", "POST", path, jsonBody(map[string]string{"mode": "fast", "code": "x"}), nil, 400, "mode must be"},
		{"not JSON", "POST", path, "code=1", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 400, ""},
		{"broken JSON", "POST", path, `{"code":`, nil, 400, "must be JSON"},
		{"bad exercise", "POST", "/api/exercises/9999/submissions", jsonBody(map[string]string{"mode": "run", "code": "x"}), nil, 404, "no such exercise"},
		{"cross-site", "POST", path, jsonBody(map[string]string{"mode": "run", "code": "x"}), map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "CSRF"},
		{"same-site, no token", "POST", path, jsonBody(map[string]string{"mode": "run", "code": "x"}), map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "CSRF"},
		{"no fetch metadata, no token", "POST", path, jsonBody(map[string]string{"mode": "run", "code": "x"}), map[string]string{"Sec-Fetch-Site": ""}, 403, "CSRF"},
		{"no fetch metadata, wrong token", "POST", path, jsonBody(map[string]string{"mode": "run", "code": "x"}), map[string]string{"Sec-Fetch-Site": "", csrfHeader: "nope"}, 403, "CSRF"},
		{"draft cross-site", "PUT", "/api/exercises/171/draft", jsonBody(map[string]string{"code": "x"}), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"draft oversize", "PUT", "/api/exercises/171/draft", jsonBody(map[string]string{"code": big}), nil, 413, ""},
		{"draft bad exercise", "PUT", "/api/exercises/nope/draft", jsonBody(map[string]string{"code": "x"}), nil, 404, ""},
		{"sign-out cross-site", "POST", "/signout", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"sign-in without token", "POST", "/signin", "name=a&code=b", map[string]string{"Sec-Fetch-Site": "", "Content-Type": "application/x-www-form-urlencoded"}, 403, ""},
		{"events bad id", "GET", "/api/submissions/x/events", "", nil, 404, ""},
		{"events unknown", "GET", "/api/submissions/12345/events", "", nil, 404, ""},
		{"wrong method", "DELETE", path, "", nil, 405, ""},
	} {
		r := c.do(tc.method, tc.path, tc.body, tc.header)
		if r.StatusCode != tc.code || !strings.Contains(r.body, tc.want) {
			t.Errorf("%s: %d %.200s; want %d with %q", tc.name, r.StatusCode, r.body, tc.code, tc.want)
		}
		if strings.HasPrefix(tc.path, "/api/") && r.StatusCode >= 400 && r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: error as %q", tc.name, r.Header.Get("Content-Type"))
		}
	}
	subs, err := env.db.Submissions(context.Background(), 1, "reconcile-loop", 100)
	if err != nil || len(subs) != 0 {
		t.Errorf("refused requests left %d submissions (%v)", len(subs), err)
	}
	if env.fake.calls != 0 {
		t.Errorf("refused requests reached the judge %d times", env.fake.calls)
	}
}

// A client without fetch metadata (an old browser) passes with the token
// from its cookie, as the page's script sends it.
func TestCSRFToken(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	noMeta := map[string]string{"Sec-Fetch-Site": ""}
	r := c.do("GET", "/exercises/171", "", noMeta)
	token := pageDataOf(t, r.body).CSRF
	if len(token) < 20 {
		t.Fatalf("token %q", token)
	}
	r = c.do("PUT", "/api/exercises/171/draft", jsonBody(map[string]string{"code": "mine"}), map[string]string{"Sec-Fetch-Site": "", csrfHeader: token})
	if r.StatusCode != http.StatusOK { // passed the check; no learner yet, so kept in the browser
		t.Fatalf("draft with token: %d %s", r.StatusCode, r.body)
	}
}

func TestDrafts(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	c.events(c.submit("171", "run", "package main").Events, nil) // the server keeps drafts once a learner exists
	code := "package main\n// <mine> & \"yours\"\n"
	if r := c.do("PUT", "/api/exercises/171/draft", jsonBody(map[string]string{"code": code}), nil); r.StatusCode != http.StatusNoContent {
		t.Fatalf("save draft: %d %s", r.StatusCode, r.body)
	}
	if d := pageDataOf(t, c.get("/exercises/171").body); d.Draft != code {
		t.Errorf("draft %q, want %q", d.Draft, code)
	}
	// Another learner sees the starter.
	ex, _ := env.cat.Find("171")
	if d := pageDataOf(t, env.client().get("/exercises/171").body); d.Draft != string(ex.Starter) {
		t.Errorf("another learner's draft %q", d.Draft)
	}
	// Submitting saves the code as the draft.
	c.events(c.submit("171", "run", "package main // submitted").Events, nil)
	if d := pageDataOf(t, c.get("/exercises/171").body); d.Draft != "package main // submitted" {
		t.Errorf("draft after submit %q", d.Draft)
	}
}

func TestEventsOfAnotherLearner(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	a, b := env.client(), env.client()
	sr := a.submit("171", "run", "package main")
	b.get("/")
	if r := b.get(sr.Events); r.StatusCode != http.StatusNotFound {
		t.Errorf("another learner's stream: %d", r.StatusCode)
	}
	a.events(sr.Events, nil)
	if r := b.get(sr.Events); r.StatusCode != http.StatusNotFound {
		t.Errorf("another learner's finished stream: %d", r.StatusCode)
	}
	anon := env.client()
	if r := anon.get(sr.Events); r.StatusCode != http.StatusNotFound {
		t.Errorf("stream without a session: %d", r.StatusCode)
	}
}

func TestQueueFull(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 8)}
	env := newEnv(t, Config{Workers: 1, QueueCap: 1}, fake)
	first := env.client()
	first.submit("171", "run", "package main")
	<-fake.started // the worker holds the first; the queue is empty
	second := env.client()
	sr := second.submit("171", "run", "package main")
	if sr.Position != 1 {
		t.Errorf("second submission at position %d", sr.Position)
	}
	third := env.client()
	r := third.do("POST", "/api/exercises/171/submissions", jsonBody(map[string]string{"mode": "run", "code": "x"}), nil)
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || !strings.Contains(r.body, "busy") {
		t.Fatalf("queue full: %d %q %s", r.StatusCode, r.Header.Get("Retry-After"), r.body)
	}
	resp := second.open(sr.Events, nil)
	close(fake.hold)
	evs := second.read(resp)
	if evs[0].Name != "queued" || evs[0].Data["position"] != 1.0 || evs[len(evs)-1].Name != "done" {
		t.Errorf("second's events %v %v", names(evs), evs[0].Data)
	}
	// Room again.
	third.events(third.submit("171", "run", "x").Events, nil)
}

func TestPendingPerLearner(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 8)}
	env := newEnv(t, Config{Workers: 1, QueueCap: 50}, fake)
	c := env.client()
	for range queue.MaxPendingPerLearner {
		c.submit("171", "run", "package main")
	}
	r := c.do("POST", "/api/exercises/171/submissions", jsonBody(map[string]string{"mode": "run", "code": "x"}), nil)
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("one learner past the limit: %d %s", r.StatusCode, r.body)
	}
	// Others still get in.
	env.client().submit("171", "run", "package main")
	close(fake.hold)
}

// Submissions a previous run left queued or running are judged at start.
func TestRecoverUnfinished(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir)
	ctx := context.Background()
	l, _, err := db.NewAnonymousLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, mode := range []verdict.Mode{verdict.ModeRun, verdict.ModeSubmit} {
		s := &records.Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Engine: judge.EngineVersion, Mode: mode, Code: solvedMarker, Seed: 1}
		if err := db.CreateSubmission(ctx, s); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := db.StartSubmission(ctx, s.ID); err != nil { // it was running at the crash
				t.Fatal(err)
			}
		}
		ids = append(ids, s.ID)
	}
	gone := &records.Submission{LearnerID: l.ID, Exercise: "removed-exercise", Engine: judge.EngineVersion, Mode: "run", Code: "x", Seed: 1}
	if err := db.CreateSubmission(ctx, gone); err != nil {
		t.Fatal(err)
	}
	fake := &fakeJudge{}
	srv, err := newServer(Config{DB: db, Catalog: builtinCatalog(t), Workers: 1}, fake)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx, time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for _, id := range ids {
		for {
			s, err := db.Submission(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.State == "done" {
				if s.Outcome != verdict.OutcomeAccepted {
					t.Errorf("recovered %d: %s", id, s.Outcome)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("recovered submission %d still %s", id, s.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if s, _ := db.Submission(ctx, gone.ID); s.State != "not_judged" || !strings.Contains(s.Note, "no longer exists") {
		t.Errorf("submission for a removed exercise: %s %q", s.State, s.Note)
	}
	if p, _ := db.Progress(ctx, l.ID); p["reconcile-loop"] != "solved" {
		t.Errorf("progress after recovery %v", p)
	}
}

// Shutdown settles every job: the waiting one at once, the running one
// after the grace period, both as not judged.
func TestShutdownSettlesJobs(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 8)}
	env := newEnv(t, Config{Workers: 1}, fake)
	a, b := env.client(), env.client()
	running := a.submit("171", "submit", "package main")
	<-fake.started
	waiting := b.submit("171", "submit", "package main")

	streams := make(chan []sseEvent, 2)
	ra, rb := a.open(running.Events, nil), b.open(waiting.Events, nil)
	go func() { streams <- a.read(ra) }()
	go func() { streams <- b.read(rb) }()

	if err := env.srv.Shutdown(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for range 2 {
		evs := <-streams
		last := evs[len(evs)-1]
		if last.Name != "not_judged" || last.Data["note"] != "server shutting down" {
			t.Errorf("stream ended with %s %v", last.Name, last.Data)
		}
	}
	for _, id := range []int64{running.ID, waiting.ID} {
		s, err := env.db.Submission(context.Background(), id)
		if err != nil || s.State != "not_judged" || s.Note != "server shutting down" {
			t.Errorf("submission %d after shutdown: %+v %v", id, s, err)
		}
	}
	if fake.canceled != 1 || fake.calls != 1 {
		t.Errorf("judge calls %d, cancelled %d; want 1 and 1", fake.calls, fake.canceled)
	}
}

func TestShutdownWaitsForJudgements(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{}), started: make(chan struct{}, 8)}
	env := newEnv(t, Config{Workers: 1}, fake)
	c := env.client()
	sr := c.submit("171", "submit", solvedMarker)
	<-fake.started
	done := make(chan error)
	go func() { done <- env.srv.Shutdown(context.Background(), time.Minute) }()
	// New work is refused while the running judgement finishes.
	waitClosed(t, env)
	if err := env.srv.q.Admit(99, ""); err != queue.ErrClosed {
		t.Errorf("admit during shutdown: %v", err)
	}
	if r := c.do("POST", "/api/exercises/171/submissions", jsonBody(map[string]string{"mode": "run", "code": "x"}), nil); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("submit during shutdown: %d %s", r.StatusCode, r.body)
	}
	close(fake.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s, _ := env.db.Submission(context.Background(), sr.ID); s.State != "done" || s.Outcome != verdict.OutcomeAccepted {
		t.Errorf("judgement in flight: %s %s", s.State, s.Outcome)
	}
}

// waitClosed waits until shutdown has closed the queue.
func waitClosed(t *testing.T, env *testEnv) {
	for range 5000 {
		err := env.srv.q.Admit(98, "")
		if err == queue.ErrClosed {
			return
		}
		if err == nil {
			env.srv.q.Cancel(98, "")
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("shutdown did not close the queue")
}

func TestSignIn(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	ctx := context.Background()
	in, err := env.db.AddInstructor(ctx, "Ada", "a long password")
	if err != nil {
		t.Fatal(err)
	}
	class, err := env.db.CreateClass(ctx, in.ID, "Ops 101")
	if err != nil {
		t.Fatal(err)
	}
	c := env.client()
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	post := func(body string) response { return c.do("POST", "/signin", body, form) }
	if r := post("name=Lin&code=WRONG&next=/exercises/171"); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "No class has that join code") {
		t.Errorf("bad code: %d", r.StatusCode)
	}
	if r := post("name=&code=" + class.JoinCode); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("no name: %d", r.StatusCode)
	}
	r := post("name=%3Cb%3ELin%3C%2Fb%3E&code=" + class.JoinCode + "&next=https://evil.example/")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("sign in: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	home := c.get("/")
	if !strings.Contains(home.body, "Signed in as <strong>&lt;b&gt;Lin&lt;/b&gt;</strong>") {
		t.Errorf("home after sign-in lacks the escaped name")
	}
	if r := c.do("POST", "/signout", "", form); r.StatusCode != http.StatusSeeOther {
		t.Errorf("sign out: %d", r.StatusCode)
	}
	if home := c.get("/"); strings.Contains(home.body, "Signed in as") {
		t.Error("still signed in after sign-out")
	}
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/exercises/171": "/exercises/171", "": "/", "//evil.example": "/", "https://evil.example/x": "/",
		"/\\evil.example": "/", "exercises": "/", "/a?b=c": "/a?b=c",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatic(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	for _, name := range []string{"app.js", "editor.js", "style.css", "editor.css", "theme.js", "chroma.css"} {
		url := env.srv.assets.url(name)
		r := c.do("GET", url, "", map[string]string{"Accept-Encoding": "gzip"})
		if r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "gzip" ||
			!strings.Contains(r.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d %q %q", url, r.StatusCode, r.Header.Get("Content-Encoding"), r.Header.Get("Cache-Control"))
		}
		r = c.get("/static/" + name)
		if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "no-cache" || len(r.body) == 0 {
			t.Errorf("%s without hash: %d %q", name, r.StatusCode, r.Header.Get("Cache-Control"))
		}
		if r := c.do("GET", "/static/"+name, "", map[string]string{"If-None-Match": r.Header.Get("ETag")}); r.StatusCode != http.StatusNotModified {
			t.Errorf("%s revalidation: %d", name, r.StatusCode)
		}
	}
	for _, p := range []string{"/static/nope.js", "/static/..%2fserver.go", "/static/"} {
		if r := c.get(p); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d", p, r.StatusCode)
		}
	}
	if ct := c.get("/static/app.js").Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("app.js served as %q", ct)
	}
}

func TestMarkdown(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	ch := string(env.srv.docs.chapter["controller-pattern"])
	if !strings.Contains(ch, "<h2 id=") {
		t.Errorf("chapter headings lack ids: %.300s", ch)
	}
	md := newMarkdown()
	cat := &exercise.Catalog{Chapters: []*exercise.Chapter{{Slug: "c", Body: "---\ntitle: x\n---\n# Title\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {}\n```\n\n[x](javascript:alert(1))\n"}}}
	d, err := renderCatalog(md, cat)
	if err != nil {
		t.Fatal(err)
	}
	out := string(d.chapter["c"])
	for _, w := range []string{`<h1 id="title">Title</h1>`, "<table>", `<pre tabindex="0" class="chroma">`, `<span class="kd">func</span>`} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q:\n%s", w, out)
		}
	}
	for _, bad := range []string{"<script>", "javascript:", "title: x"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown holds %q:\n%s", bad, out)
		}
	}
}

func TestDoneEventJSON(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	v := &verdict.Verdict{Outcome: verdict.OutcomeCompileError, Status: verdict.StatusError, Mode: verdict.ModeRun,
		Message: "did not compile", Diagnostics: []verdict.Diagnostic{{File: "reconcile-loop.go", Line: 3, Column: 2, Message: "undefined: x"}}}
	ev := env.srv.doneEvent(v, 10)
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"outcome":"compile_error"`, `"line":3`, `Compile error`, `data-line=\"3\"`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("done event lacks %q: %s", w, b)
		}
	}
}

// The instructor pages are mounted under /instructor, behind the same
// headers and CSRF check, and their re-judges go through our queue.
func TestInstructorMount(t *testing.T) {
	env := newEnv(t, Config{}, nil)
	c := env.client()
	r := c.get("/instructor/login")
	if r.StatusCode != http.StatusOK || !strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("instructor login: %d", r.StatusCode)
	}
	if r := c.get("/instructor/"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("instructor pages without a session: %d", r.StatusCode)
	}
	if r := c.do("POST", "/instructor/login", "name=a&password=b", map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site instructor login: %d", r.StatusCode)
	}

	ctx := context.Background()
	l, _, err := env.db.NewAnonymousLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orig := &records.Submission{LearnerID: l.ID, Exercise: "reconcile-loop", Engine: judge.EngineVersion, Mode: "submit", Code: solvedMarker, Seed: 1}
	if err := env.db.CreateSubmission(ctx, orig); err != nil {
		t.Fatal(err)
	}
	if queued, err := env.srv.q.Rejudge(ctx, orig); !queued || err != nil {
		t.Fatalf("queue a re-judge: %v, %v", queued, err)
	}
	subs, err := env.db.Submissions(ctx, l.ID, "reconcile-loop", 0)
	if err != nil {
		t.Fatal(err)
	}
	var sub *records.Submission
	for _, s := range subs {
		if s.RejudgeOf == orig.ID {
			sub = s
		}
	}
	if sub == nil {
		t.Fatalf("no re-judge of %d in %+v", orig.ID, subs)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s, err := env.db.Submission(ctx, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("re-judge still %s", s.State)
		}
	}
	if _, err := env.srv.q.Rejudge(ctx, &records.Submission{ID: 99, Exercise: "gone"}); err == nil {
		t.Error("re-judge of an unknown exercise accepted")
	}
}

// A panic in the engine becomes an internal error; the server carries on.
func TestJudgePanic(t *testing.T) {
	env := newEnv(t, Config{Workers: 1}, nil)
	c := env.client()
	evs := c.events(c.submit("171", "submit", panicMarker).Events, nil)
	if done := evs[len(evs)-1]; done.Name != "done" || done.Data["outcome"] != string(verdict.OutcomeInternalError) {
		t.Errorf("after a panic: %s %v", done.Name, done.Data["outcome"])
	}
	evs = c.events(c.submit("171", "submit", solvedMarker).Events, nil)
	if done := evs[len(evs)-1]; done.Data["outcome"] != string(verdict.OutcomeAccepted) {
		t.Errorf("the next submission: %v", done.Data["outcome"])
	}
}

// A judgement that a wall-clock safety net cut short is neither stored nor
// charged: the server judges it again, and settles it as not judged only
// after queue.MaxJudgeAttempts.
func TestNotJudgedIsRetriedNotCharged(t *testing.T) {
	for _, c := range []struct {
		busy      int
		wantState string
		wantCalls int
	}{
		{busy: 1, wantState: "done", wantCalls: 2},
		{busy: queue.MaxJudgeAttempts, wantState: "not_judged", wantCalls: queue.MaxJudgeAttempts},
	} {
		fake := &fakeJudge{busy: c.busy, hold: make(chan struct{}), started: make(chan struct{}, 8)}
		env := newEnv(t, Config{Workers: 1}, fake)
		cl := env.client()
		sub := cl.submit("171", "submit", "package main "+solvedMarker)
		<-fake.started
		stream := cl.open(sub.Events, nil)
		close(fake.hold)
		evs := cl.read(stream)
		names := []string{}
		for _, ev := range evs {
			names = append(names, ev.Name)
		}
		if last := evs[len(evs)-1]; last.Name != map[string]string{"done": "done", "not_judged": "not_judged"}[c.wantState] {
			t.Errorf("busy %d: stream %v", c.busy, names)
		}
		if !slices.Contains(names, "retrying") {
			t.Errorf("busy %d: no retrying event in %v", c.busy, names)
		}
		s, err := env.db.Submission(context.Background(), sub.ID)
		if err != nil || s.State != c.wantState {
			t.Fatalf("busy %d: stored %+v, %v", c.busy, s, err)
		}
		if fake.calls != c.wantCalls {
			t.Errorf("busy %d: judged %d times, want %d", c.busy, fake.calls, c.wantCalls)
		}
		if c.wantState == "not_judged" && s.Charged() {
			t.Errorf("a submission never judged was charged")
		}
	}
}

// An attempt that ended not judged is not charged to the grade, but it
// is to the sender's submission rate: a file that only ever meets the
// wall-clock net cannot buy server time without limit.
func TestNotJudgedCountsAgainstTheRate(t *testing.T) {
	fake := &fakeJudge{busy: queue.MaxJudgeAttempts, hold: make(chan struct{}), started: make(chan struct{}, 8)}
	env := newEnv(t, Config{Workers: 1}, fake)
	cl := env.client()
	sub := cl.submit("171", "submit", "package main "+solvedMarker)
	<-fake.started
	stream := cl.open(sub.Events, nil)
	close(fake.hold)
	if evs := cl.read(stream); evs[len(evs)-1].Name != "not_judged" {
		t.Fatalf("stream ended with %q", evs[len(evs)-1].Name)
	}
	// Three attempts took 90 submissions' worth, the whole burst: the
	// next few are refused by the rate, not by the queue.
	limited := 0
	for range 5 {
		r := cl.do(http.MethodPost, "/api/exercises/171/submissions", jsonBody(map[string]string{"mode": "run", "code": "package main"}), nil)
		if r.StatusCode == http.StatusTooManyRequests && strings.Contains(r.body, "too many submissions from your network") {
			limited++
		}
	}
	if limited < 3 {
		t.Errorf("%d of 5 submissions after three attempts not judged were refused by the rate, want at least 3", limited)
	}
}
