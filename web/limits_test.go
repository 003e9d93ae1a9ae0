package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ctrljudge/judge/records"
)

// Addresses the tests pose as, behind a trusted proxy on loopback.
const (
	attackerAddr = "203.0.113.7"
	honestAddr   = "198.51.100.20"
)

func loopbackProxy(t testing.TB) []*net.IPNet {
	t.Helper()
	nets, err := ParseTrustedProxies("127.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	return nets
}

// answer is one raw HTTP exchange, safe to make from any goroutine.
type answer struct {
	code    int
	header  http.Header
	body    string
	cookies []*http.Cookie
	err     error
}

// send makes one request with no cookie jar (unless hc has one), as a
// same-origin browser request forwarded for addr ("" for none).
func send(hc *http.Client, method, u, body, contentType, addr string, header map[string]string) answer {
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, header: resp.Header, body: string(b), cookies: resp.Cookies(), err: err}
}

var noRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func bareClient() *http.Client {
	return &http.Client{Timeout: 20 * time.Second, CheckRedirect: noRedirect}
}

// countLearners counts learner rows straight from the file.
func countLearners(t testing.TB, db *records.DB) int {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow("SELECT count(*) FROM learners").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// flood runs n requests from workers goroutines at once.
func flood(n, workers int, do func(i int) answer) []answer {
	out := make([]answer, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				out[i] = do(i)
			}
		})
	}
	wg.Wait()
	return out
}

// whileFlooding polls the health check and the home page from another
// address until stop is closed, and reports the slowest answer and any
// failure: the server must keep answering.
func whileFlooding(env *testEnv, stop <-chan struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		hc := bareClient()
		var slowest time.Duration
		for {
			for _, p := range []string{"/healthz", "/"} {
				start := time.Now()
				a := send(hc, http.MethodGet, env.ts.URL+p, "", "", honestAddr, nil)
				if a.err != nil || a.code != http.StatusOK {
					done <- &pollError{p, a}
					return
				}
				slowest = max(slowest, time.Since(start))
			}
			select {
			case <-stop:
				if slowest > 2*time.Second {
					done <- &pollError{"slowest answer " + slowest.String(), answer{}}
					return
				}
				done <- nil
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return done
}

type pollError struct {
	what string
	a    answer
}

func (e *pollError) Error() string {
	return "during the flood, " + e.what + ": " + strconv.Itoa(e.a.code) + " " + func() string {
		if e.a.err != nil {
			return e.a.err.Error()
		}
		return ""
	}()
}

func retryAfter(t testing.TB, a answer) int {
	t.Helper()
	n, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Errorf("429 without a usable Retry-After: %q", a.header.Get("Retry-After"))
	}
	return n
}

// 200 wrong join codes in a fraction of a second: past the burst they are
// refused with 429 and Retry-After, none leaves a learner row, the server
// keeps answering, and a class at another address still joins.
func TestJoinCodeFlood(t *testing.T) {
	env := newEnv(t, Config{TrustedProxies: loopbackProxy(t)}, nil)
	ctx := context.Background()
	in, err := env.db.AddInstructor(ctx, "Ada", "a long password")
	if err != nil {
		t.Fatal(err)
	}
	class, err := env.db.CreateClass(ctx, in.ID, "Ops 101")
	if err != nil {
		t.Fatal(err)
	}
	form := "application/x-www-form-urlencoded"
	stop := make(chan struct{})
	polling := whileFlooding(env, stop)
	start := time.Now()
	hc := bareClient()
	answers := flood(200, 20, func(i int) answer {
		return send(hc, http.MethodPost, env.ts.URL+"/signin",
			"name=Mallory&code=GUESS"+strconv.Itoa(i), form, attackerAddr, nil)
	})
	elapsed := time.Since(start)
	close(stop)
	if err := <-polling; err != nil {
		t.Error(err)
	}
	codes := map[int]int{}
	for _, a := range answers {
		if a.err != nil {
			t.Fatal(a.err)
		}
		codes[a.code]++
		if a.code == http.StatusTooManyRequests {
			retryAfter(t, a)
		}
		for _, ck := range a.cookies {
			if ck.Name == sessionCookie {
				t.Errorf("a failed sign-in set a session cookie")
			}
		}
	}
	// The burst, plus what refilled while the flood ran.
	allowed := signInBurst + int(elapsed/signInEvery) + 1
	if codes[http.StatusUnprocessableEntity] > allowed || codes[http.StatusTooManyRequests] < 200-allowed ||
		codes[http.StatusUnprocessableEntity]+codes[http.StatusTooManyRequests] != 200 {
		t.Errorf("200 wrong codes in %v: %v; want at most %d answered (422), the rest 429", elapsed, codes, allowed)
	}
	if n := countLearners(t, env.db); n != 0 {
		t.Errorf("failed sign-ins left %d learner rows", n)
	}
	// Another address is not held back by the flood.
	a := send(hc, http.MethodPost, env.ts.URL+"/signin", "name=Lin&code="+class.JoinCode, form, honestAddr, nil)
	if a.code != http.StatusSeeOther {
		t.Errorf("honest sign-in during the flood: %d %.200s", a.code, a.body)
	}
	if n := countLearners(t, env.db); n != 1 {
		t.Errorf("after one good sign-in: %d learner rows", n)
	}
}

// 40 wrong instructor passwords from one address, then the right one: the
// lock refuses it from the guessing address without checking it, and the
// owner at her own address signs in; the guessing address stays refused.
func TestInstructorPasswordGuessing(t *testing.T) {
	env := newEnv(t, Config{TrustedProxies: loopbackProxy(t)}, nil)
	const password = "the right password"
	if _, err := env.db.AddInstructor(context.Background(), "Ada", password); err != nil {
		t.Fatal(err)
	}
	hc := bareClient()
	login := func(pw, addr string) answer {
		return send(hc, http.MethodPost, env.ts.URL+"/instructor/login",
			url.Values{"name": {"Ada"}, "password": {pw}}.Encode(), "application/x-www-form-urlencoded", addr, nil)
	}
	signedIn := func(a answer) bool {
		for _, ck := range a.cookies {
			if ck.Name == "cj_instructor" && ck.Value != "" {
				return true
			}
		}
		return a.code == http.StatusSeeOther
	}
	codes := map[int]int{}
	for i := range 40 {
		a := login("guess "+strconv.Itoa(i), attackerAddr)
		codes[a.code]++
		if signedIn(a) {
			t.Fatalf("wrong password %d signed in", i)
		}
		if i >= 5 && a.code != http.StatusTooManyRequests {
			t.Errorf("wrong password %d: %d; want 429 once 5 have failed", i, a.code)
		}
	}
	if codes[http.StatusUnauthorized] != 5 {
		t.Errorf("wrong passwords answered %v; want 5 checked (401), the rest refused", codes)
	}
	a := login(password, attackerAddr)
	if signedIn(a) || a.code != http.StatusTooManyRequests {
		t.Fatalf("right password from the guessing address after 40 wrong ones: %d, signed in %v", a.code, signedIn(a))
	}
	if wait := retryAfter(t, a); wait > int(firstLockForTest/time.Second)+1 {
		t.Errorf("Retry-After %d s; the first lock is %v", wait, firstLockForTest)
	}
	if a := login(password, honestAddr); !signedIn(a) {
		t.Fatalf("the owner from her own address after 40 wrong passwords elsewhere: %d %.300s", a.code, a.body)
	}
	if a := login(password, attackerAddr); signedIn(a) || a.code != http.StatusTooManyRequests {
		t.Errorf("the guessing address after the owner signed in: %d, signed in %v", a.code, signedIn(a))
	}
}

// firstLockForTest mirrors the instructor package's first lock (30 s).
const firstLockForTest = 30 * time.Second

// 80 clients without cookies, all from one address, flood the queue; an
// honest learner elsewhere is still admitted and judged, refusals carry
// Retry-After, and only admitted submissions made learners.
func TestCookielessFloodCannotStarveHonestLearner(t *testing.T) {
	fake := &fakeJudge{hold: make(chan struct{})}
	env := newEnv(t, Config{Workers: 1, TrustedProxies: loopbackProxy(t)}, fake)
	body := jsonBody(map[string]string{"mode": "submit", "code": "package main"})
	stop := make(chan struct{})
	polling := whileFlooding(env, stop)
	answers := flood(80, 80, func(int) answer {
		return send(bareClient(), http.MethodPost, env.ts.URL+"/api/exercises/171/submissions", body, "application/json", attackerAddr, nil)
	})
	admitted := 0
	for _, a := range answers {
		switch {
		case a.err != nil:
			t.Fatal(a.err)
		case a.code == http.StatusAccepted:
			admitted++
		case a.code == http.StatusTooManyRequests:
			retryAfter(t, a)
		default:
			t.Errorf("flood submission: %d %s", a.code, a.body)
		}
	}
	if admitted == 0 || admitted > env.srv.q.AddressCap() {
		t.Errorf("%d of 80 cookie-less submissions admitted; want 1 to %d (the address's share)", admitted, env.srv.q.AddressCap())
	}
	if n := countLearners(t, env.db); n != admitted {
		t.Errorf("%d learner rows after %d admitted submissions: refusals made learners", n, admitted)
	}

	honest := env.client()
	a := honest.do(http.MethodPost, "/api/exercises/171/submissions", body, map[string]string{"X-Forwarded-For": honestAddr})
	if a.StatusCode != http.StatusAccepted {
		t.Fatalf("honest learner during the flood: %d %s", a.StatusCode, a.body)
	}
	var sr submitResponse
	if err := json.Unmarshal([]byte(a.body), &sr); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if err := <-polling; err != nil {
		t.Error(err)
	}
	close(fake.hold)
	evs := honest.events(sr.Events, nil)
	if last := evs[len(evs)-1]; last.Name != "done" {
		t.Errorf("the honest submission ended %s %v", last.Name, last.Data)
	}
}

// Draft saves without a session store nothing and make no learner (300 of
// them used to make 300); past the burst they are refused with 429.
func TestDraftsWithoutCookieCreateNothing(t *testing.T) {
	env := newEnv(t, Config{TrustedProxies: loopbackProxy(t)}, nil)
	body := jsonBody(map[string]string{"code": "package main // a draft"})
	hc := bareClient()
	answers := flood(300, 20, func(i int) answer {
		// Three addresses, each within its burst: every save is answered.
		addr := "203.0.113." + strconv.Itoa(10+i%3)
		return send(hc, http.MethodPut, env.ts.URL+"/api/exercises/171/draft", body, "application/json", addr, nil)
	})
	for _, a := range answers {
		if a.err != nil || a.code != http.StatusOK || !strings.Contains(a.body, `"stored":false`) {
			t.Fatalf("cookie-less draft: %d %s %v", a.code, a.body, a.err)
		}
		for _, ck := range a.cookies {
			if ck.Name == sessionCookie {
				t.Fatal("a cookie-less draft save set a session")
			}
		}
	}
	if n := countLearners(t, env.db); n != 0 {
		t.Errorf("300 cookie-less drafts left %d learner rows", n)
	}
	more := flood(draftBurst+50, 20, func(int) answer {
		return send(hc, http.MethodPut, env.ts.URL+"/api/exercises/171/draft", body, "application/json", attackerAddr, nil)
	})
	refused := 0
	for _, a := range more {
		if a.code == http.StatusTooManyRequests {
			refused++
			retryAfter(t, a)
		}
	}
	if refused == 0 {
		t.Errorf("%d draft saves at once from one address: none refused", len(more))
	}
	// A learner with a session still has drafts kept.
	c := env.client()
	c.events(c.submit("171", "run", "package main").Events, nil)
	if r := c.do(http.MethodPut, "/api/exercises/171/draft", body, nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("draft with a session: %d %s", r.StatusCode, r.body)
	}
}

// Cookies are Secure when the public URL is https or a trusted proxy says
// the browser used https; a header from an untrusted peer changes nothing,
// and neither does its X-Forwarded-For (limits count the socket's address).
func TestSecureCookies(t *testing.T) {
	tenNet, err := ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	https := map[string]string{"X-Forwarded-Proto": "https"}
	for _, tc := range []struct {
		name   string
		cfg    Config
		header map[string]string
		secure bool
	}{
		{"https public URL", Config{PublicURL: "https://judge.example.edu"}, nil, true},
		{"http public URL", Config{PublicURL: "http://localhost:8080"}, nil, false},
		{"trusted proxy says https", Config{TrustedProxies: loopbackProxy(t)}, https, true},
		{"trusted proxy says http", Config{TrustedProxies: loopbackProxy(t)}, map[string]string{"X-Forwarded-Proto": "http"}, false},
		{"untrusted peer says https", Config{TrustedProxies: tenNet}, https, false},
		{"no proxy configured, header says https", Config{}, https, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.cfg, nil)
			hc := bareClient()
			// Without fetch metadata, as an older browser: the CSRF cookie is set.
			noMeta := map[string]string{"Sec-Fetch-Site": ""}
			for k, v := range tc.header {
				noMeta[k] = v
			}
			page := send(hc, http.MethodGet, env.ts.URL+"/exercises/171", "", "", "", noMeta)
			sub := send(hc, http.MethodPost, env.ts.URL+"/api/exercises/171/submissions",
				jsonBody(map[string]string{"mode": "run", "code": "package main"}), "application/json", "", tc.header)
			if sub.code != http.StatusAccepted {
				t.Fatalf("submit: %d %s", sub.code, sub.body)
			}
			seen := map[string]bool{}
			for _, ck := range append(page.cookies, sub.cookies...) {
				seen[ck.Name] = true
				if ck.Secure != tc.secure {
					t.Errorf("cookie %s: Secure %v, want %v", ck.Name, ck.Secure, tc.secure)
				}
			}
			if !seen[sessionCookie] || !seen[csrfCookie] {
				t.Errorf("cookies set: %v", seen)
			}
		})
	}

	// The instructor's cookie too.
	env := newEnv(t, Config{TrustedProxies: loopbackProxy(t)}, nil)
	if _, err := env.db.AddInstructor(context.Background(), "Ada", "a long password"); err != nil {
		t.Fatal(err)
	}
	a := send(bareClient(), http.MethodPost, env.ts.URL+"/instructor/login", "name=Ada&password=a+long+password",
		"application/x-www-form-urlencoded", "", https)
	if a.code != http.StatusSeeOther || len(a.cookies) == 0 {
		t.Fatalf("instructor login: %d", a.code)
	}
	for _, ck := range a.cookies {
		if !ck.Secure {
			t.Errorf("instructor login behind an https proxy: cookie %s not Secure", ck.Name)
		}
	}

	// From an untrusted peer, X-Forwarded-For is not believed: one socket
	// address, however many addresses it claims, gets one burst.
	env = newEnv(t, Config{TrustedProxies: tenNet}, nil)
	hc := bareClient()
	refused := 0
	for i := range signInBurst + 10 {
		a := send(hc, http.MethodPost, env.ts.URL+"/signin", "name=M&code=X", "application/x-www-form-urlencoded",
			"192.0.2."+strconv.Itoa(i), nil)
		if a.code == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused == 0 {
		t.Error("spoofed X-Forwarded-For from an untrusted peer escaped the sign-in limit")
	}
}

func TestParseTrustedProxies(t *testing.T) {
	nets, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1 ::1,fd00::/8")
	if err != nil || len(nets) != 4 {
		t.Fatalf("%v %v", nets, err)
	}
	for _, ip := range []string{"10.2.3.4", "192.0.2.1", "::1", "fd00::5"} {
		ok := false
		for _, n := range nets {
			ok = ok || n.Contains(net.ParseIP(ip))
		}
		if !ok {
			t.Errorf("%s not trusted", ip)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, bad := range []string{"judge.example.edu", "ftp://x", "https://"} {
		if _, err := ParsePublicURL(bad); err == nil {
			t.Errorf("public URL %q accepted", bad)
		}
	}
}

// The server runs the clean-up itself: an anonymous learner who left
// nothing and was last seen over a week ago is gone soon after start; one
// with a submission stays.
func TestServerCleansUpAbandonedLearners(t *testing.T) {
	db := openStore(t, t.TempDir())
	ctx := context.Background()
	db.SetClock(func() time.Time { return time.Now().Add(-anonymousIdle - time.Hour) })
	gone, _, err := db.NewAnonymousLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, err := db.NewAnonymousLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &records.Submission{LearnerID: kept.ID, Exercise: "no-such-exercise", Mode: "run", Code: "x"}
	if err := db.CreateSubmission(ctx, sub); err != nil {
		t.Fatal(err)
	}
	db.SetClock(time.Now)
	srv, err := newServer(Config{DB: db, Catalog: builtinCatalog(t), Workers: 1}, &fakeJudge{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx, time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := db.Learner(ctx, gone.ID); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned learner is still there")
		}
	}
	if _, err := db.Learner(ctx, kept.ID); err != nil {
		t.Errorf("a learner with a submission was cleaned up: %v", err)
	}
}
