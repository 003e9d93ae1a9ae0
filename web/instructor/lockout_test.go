package instructor

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"ctrljudge/judge/records/recordstest"
)

func TestGuardLocksAndBacksOff(t *testing.T) {
	g := newGuard()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	const acct, addr = "Grace", "203.0.113.7"
	for i := range pairFreeFailures {
		if r := g.begin(acct, addr); r.refused() {
			t.Fatalf("attempt %d refused; %d are free", i+1, pairFreeFailures)
		}
	}
	// The fifth failure locked the pair: even the right password waits.
	r := g.begin(acct, addr)
	if want := now.Add(firstLock); !r.until.Equal(want) || r.slowed {
		t.Fatalf("locked until %v (slowed %v), want %v", r.until, r.slowed, want)
	}
	// The account is not locked: the same name from elsewhere is checked.
	if r := g.begin(acct, "198.51.100.20"); r.refused() {
		t.Fatalf("another address refused until %v", r.until)
	}
	g.succeed(acct, "198.51.100.20")
	// Each failure after a lock doubles it.
	lock := firstLock
	until := r.until
	for range 10 {
		now = until
		if r := g.begin(acct, addr); r.refused() {
			t.Fatalf("still locked at the lock's end: %v", r.until)
		}
		lock = min(2*lock, maxLock)
		until = g.begin(acct, addr).until
		if got := until.Sub(now); got != lock {
			t.Fatalf("next lock %v, want %v", got, lock)
		}
	}
	// The right password once the lock ends clears the count.
	now = until
	g.begin(acct, addr)
	g.succeed(acct, addr)
	for i := range pairFreeFailures - 1 {
		if r := g.begin(acct, addr); r.refused() {
			t.Fatalf("after success, attempt %d refused", i+1)
		}
	}
	// A quiet day forgets failures.
	now = now.Add(failureMemory + time.Minute)
	for i := range pairFreeFailures - 1 {
		if r := g.begin(acct, addr); r.refused() {
			t.Fatalf("after a quiet day, attempt %d refused", i+1)
		}
	}
}

// Strangers at many addresses guess one account's password. Each locks only
// its own pair; once the account's budget is spent, addresses that failed
// there wait a few seconds, and the owner at an address that has not
// failed is checked at once, however long the guessing goes on.
func TestGuardCannotLockOutTheOwner(t *testing.T) {
	g := newGuard()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	const acct, owner = "Grace", "198.51.100.20"
	stranger := func(i int) string { return "203.0.113." + strconv.Itoa(i) }
	checked, slowed := 0, 0
	for minute := range 60 {
		for i := range 100 {
			now = now.Add(time.Minute / 100)
			r := g.begin(acct, stranger(i%50))
			switch {
			case !r.refused():
				checked++
			case r.slowed:
				slowed++
				if wait := r.until.Sub(now); wait > accountCheckEvery {
					t.Fatalf("slowed down for %v; the budget refills every %v", wait, accountCheckEvery)
				}
			}
		}
		if r := g.begin(acct, owner); r.refused() {
			t.Fatalf("minute %d: the owner's first attempt refused until %v (slowed %v)", minute, r.until, r.slowed)
		}
		g.succeed(acct, owner)
	}
	// 50 fresh addresses, then the budget: about 10 a minute.
	if max := 50 + accountChecksBurst + 60*int(time.Minute/accountCheckEvery); checked > max {
		t.Errorf("%d guesses checked in an hour; want at most %d", checked, max)
	}
	if slowed == 0 {
		t.Error("no guess was slowed down")
	}
	// A stranger's pair stays locked after the owner signs in.
	if r := g.begin(acct, stranger(0)); !r.refused() {
		t.Error("a guessing address is not refused after the owner signed in")
	}
	// The owner who mistyped shares the budget: refused for a few seconds
	// at most, then checked, not locked.
	g.begin(acct, owner) // a typo
	r := g.begin(acct, owner)
	for r.refused() {
		if !r.slowed || r.until.Sub(now) > accountCheckEvery {
			t.Fatalf("the owner after a typo: refused until %v (slowed %v)", r.until, r.slowed)
		}
		now = r.until
		r = g.begin(acct, owner)
	}
}

// Spraying many names from one address locks the address.
func TestGuardLocksAnAddress(t *testing.T) {
	g := newGuard()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	for i := range addressFreeFailures {
		if r := g.begin("name"+strconv.Itoa(i), "203.0.113.7"); r.refused() {
			t.Fatalf("name %d refused", i)
		}
	}
	if r := g.begin("Grace", "203.0.113.7"); !r.refused() || r.slowed {
		t.Error("an address that failed with 10 names is not locked")
	}
	if r := g.begin("Grace", "198.51.100.20"); r.refused() {
		t.Error("another address is locked too")
	}
}

// loginFrom signs in as name from a client address.
func (ts *testServer) loginFrom(addr, name, password string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, prefix+"/login",
		strings.NewReader(url.Values{"name": {name}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = addr + ":40000"
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	return rec
}

func hasSession(rec *httptest.ResponseRecorder) bool {
	for _, c := range rec.Result().Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			return true
		}
	}
	return false
}

// Through HTTP: wrong passwords, then the right one from the same address
// during the lock is refused with 429, Retry-After and the time to come
// back; no session. The owner at her own address is not locked out.
func TestLoginLockout(t *testing.T) {
	ts := newTestServer(t)
	const stranger, owner = "203.0.113.7", "198.51.100.20"
	for i := range pairFreeFailures {
		rec := ts.loginFrom(stranger, "Grace", "guess "+strconv.Itoa(i))
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, rec.Code)
		}
	}
	rec := ts.loginFrom(stranger, "Grace", recordstest.OwnerPassword)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "locked until") {
		t.Fatalf("right password during the lock: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if hasSession(rec) {
		t.Error("a locked sign-in set a session cookie")
	}
	// The owner from her own address signs in.
	if rec := ts.loginFrom(owner, "Grace", recordstest.OwnerPassword); rec.Code != http.StatusSeeOther || !hasSession(rec) {
		t.Fatalf("the owner from her own address: %d, session %v", rec.Code, hasSession(rec))
	}
	// Others are not locked out.
	ts.login("Mallory", recordstest.OtherPassword)
}

// Many strangers' wrong passwords, enough to have locked the account for
// an hour before, and the owner at her own address still signs in at the
// first try; the strangers stay refused.
func TestLoginStrangersCannotLockOutOwner(t *testing.T) {
	// Time stands still: on a busy machine 60 bcrypt checks take long
	// enough to refill the account's budget.
	at := time.Now()
	guardClock = func() time.Time { return at }
	t.Cleanup(func() { guardClock = time.Now })
	ts := newTestServer(t)
	const owner = "198.51.100.20"
	codes := map[int]int{}
	for i := range 60 {
		rec := ts.loginFrom("203.0.113."+strconv.Itoa(i%3), "Grace", "guess "+strconv.Itoa(i))
		codes[rec.Code]++
		if hasSession(rec) {
			t.Fatalf("wrong password %d signed in", i)
		}
	}
	if codes[http.StatusUnauthorized] > 3*pairFreeFailures || codes[http.StatusTooManyRequests] == 0 {
		t.Errorf("60 wrong passwords from 3 addresses answered %v; want at most %d checked", codes, 3*pairFreeFailures)
	}
	rec := ts.loginFrom(owner, "Grace", recordstest.OwnerPassword)
	if rec.Code != http.StatusSeeOther || !hasSession(rec) {
		t.Fatalf("the owner after 60 wrong passwords elsewhere: %d, session %v\n%.300s", rec.Code, hasSession(rec), rec.Body.String())
	}
	for i := range 3 {
		rec := ts.loginFrom("203.0.113."+strconv.Itoa(i), "Grace", recordstest.OwnerPassword)
		if rec.Code != http.StatusTooManyRequests || hasSession(rec) {
			t.Errorf("stranger %d with the right password after the owner signed in: %d", i, rec.Code)
		}
	}
}

// A huge typed name is not kept whole, and the map stays bounded.
func TestGuardBoundsItsMemory(t *testing.T) {
	g := newGuard()
	g.begin(strings.Repeat("x", 100<<10), "203.0.113.7")
	for k := range g.keys {
		if len(k) > maxKeyName+len("pair:203.0.113.7 ") {
			t.Errorf("kept a %d-byte key", len(k))
		}
	}
	for i := range maxTracked + 100 {
		g.begin("name"+strconv.Itoa(i), "10.0."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250))
	}
	if len(g.keys) > maxTracked {
		t.Errorf("%d keys kept; the bound is %d", len(g.keys), maxTracked)
	}
	for i := range maxTracked + 100 {
		g.budget("name"+strconv.Itoa(i), g.now()).Allow()
	}
	if len(g.accounts) > maxTracked {
		t.Errorf("%d budgets kept; the bound is %d", len(g.accounts), maxTracked)
	}
}
