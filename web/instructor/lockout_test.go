package instructor

import (
	"net/http"
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
	for i := range accountFreeFailures {
		if until := g.begin(acct, addr); !until.IsZero() {
			t.Fatalf("attempt %d refused; %d are free", i+1, accountFreeFailures)
		}
	}
	// The fifth failure locked the account: even the right password waits.
	until := g.begin(acct, "198.51.100.20")
	if want := now.Add(firstLock); !until.Equal(want) {
		t.Fatalf("locked until %v, want %v", until, want)
	}
	// Each failure after a lock doubles it.
	lock := firstLock
	for range 10 {
		now = until
		if u := g.begin(acct, addr); !u.IsZero() {
			t.Fatalf("still locked at the lock's end: %v", u)
		}
		lock = min(2*lock, maxLock)
		until = g.begin(acct, addr)
		if got := until.Sub(now); got != lock {
			t.Fatalf("next lock %v, want %v", got, lock)
		}
	}
	// The right password once the lock ends clears the count.
	now = until
	g.begin(acct, addr)
	g.succeed(acct, addr)
	for i := range accountFreeFailures - 1 {
		if u := g.begin(acct, addr); !u.IsZero() {
			t.Fatalf("after success, attempt %d refused", i+1)
		}
	}
	// A quiet day forgets failures.
	now = now.Add(failureMemory + time.Minute)
	for i := range accountFreeFailures - 1 {
		if u := g.begin(acct, addr); !u.IsZero() {
			t.Fatalf("after a quiet day, attempt %d refused", i+1)
		}
	}
}

// Spraying many names from one address locks the address.
func TestGuardLocksAnAddress(t *testing.T) {
	g := newGuard()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	for i := range addressFreeFailures {
		if u := g.begin("name"+strconv.Itoa(i), "203.0.113.7"); !u.IsZero() {
			t.Fatalf("name %d refused", i)
		}
	}
	if u := g.begin("Grace", "203.0.113.7"); u.IsZero() {
		t.Error("an address that failed with 10 names is not locked")
	}
	if u := g.begin("Grace", "198.51.100.20"); !u.IsZero() {
		t.Error("another address is locked too")
	}
}

// Through HTTP: wrong passwords, then the right one during the lock is
// refused with 429, Retry-After and the time to come back; no session.
func TestLoginLockout(t *testing.T) {
	ts := newTestServer(t)
	for i := range accountFreeFailures {
		rec := ts.do(http.MethodPost, prefix+"/login", "", url.Values{"name": {"Grace"}, "password": {"guess " + strconv.Itoa(i)}})
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, rec.Code)
		}
	}
	rec := ts.do(http.MethodPost, prefix+"/login", "", url.Values{"name": {"Grace"}, "password": {recordstest.OwnerPassword}})
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "locked until") {
		t.Fatalf("right password during the lock: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == sessionCookie {
			t.Error("a locked sign-in set a session cookie")
		}
	}
	// Others are not locked out.
	ts.login("Mallory", recordstest.OtherPassword)
}

// A huge typed name is not kept whole, and the map stays bounded.
func TestGuardBoundsItsMemory(t *testing.T) {
	g := newGuard()
	g.begin(strings.Repeat("x", 100<<10), "203.0.113.7")
	for k := range g.keys {
		if len(k) > maxKeyName+len("account:") {
			t.Errorf("kept a %d-byte key", len(k))
		}
	}
	for i := range maxTracked + 100 {
		g.begin("name"+strconv.Itoa(i), "10.0."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250))
	}
	if len(g.keys) > maxTracked {
		t.Errorf("%d keys kept; the bound is %d", len(g.keys), maxTracked)
	}
}
