package instructor

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Password guessing. Each account and each client address counts its
// failed sign-ins; past the free ones, every further failure locks the
// account (or address) for firstLock, doubling up to maxLock. While locked,
// every attempt is refused before the password is checked, the right one
// too, so "40 wrong, then the right one" finds nothing. Counts are kept in
// memory: a restart forgets them, and needs the host.
const (
	accountFreeFailures = 5  // typos before an account locks
	addressFreeFailures = 10 // more for an address: a staff room behind one NAT address mistypes too
	firstLock           = 30 * time.Second
	maxLock             = time.Hour
	// failureMemory: failures with none newer for this long are forgotten.
	failureMemory = 24 * time.Hour
	// maxTracked bounds the names and addresses remembered; past it, the
	// forgotten and then the unlocked are dropped first.
	maxTracked = 10000
	// maxKeyName bounds the bytes of a typed name kept as a key: no account
	// name is longer (64 characters), and a 100 KiB name must not be kept.
	maxKeyName = 256
)

func accountKey(name string) string {
	if len(name) > maxKeyName {
		name = name[:maxKeyName]
	}
	return "account:" + name
}

// guard counts failed sign-ins per key ("account:NAME", "address:ADDR").
type guard struct {
	mu   sync.Mutex
	now  func() time.Time
	keys map[string]*strikes
}

type strikes struct {
	failures int
	last     time.Time // the latest failure
	until    time.Time // locked until then
}

func newGuard() *guard { return &guard{now: time.Now, keys: map[string]*strikes{}} }

// begin starts an attempt by account from address. If either is locked it
// returns when the lock ends. Otherwise it counts the attempt as a failure
// already, so that attempts racing in parallel count too; succeed takes it
// back.
func (g *guard) begin(account, address string) (lockedUntil time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	for _, k := range []string{accountKey(account), "address:" + address} {
		if s := g.keys[k]; s != nil && s.until.After(now) && s.until.After(lockedUntil) {
			lockedUntil = s.until
		}
	}
	if !lockedUntil.IsZero() {
		return lockedUntil
	}
	g.fail(accountKey(account), accountFreeFailures, now)
	g.fail("address:"+address, addressFreeFailures, now)
	return time.Time{}
}

func (g *guard) fail(key string, free int, now time.Time) {
	s := g.keys[key]
	if s == nil {
		if len(g.keys) >= maxTracked {
			g.evict(now)
		}
		s = &strikes{}
		g.keys[key] = s
	}
	if now.Sub(s.last) > failureMemory {
		s.failures = 0
	}
	s.failures++
	s.last = now
	if s.failures >= free {
		lock := maxLock
		if shift := s.failures - free; shift < 8 && firstLock<<shift < maxLock {
			lock = firstLock << shift
		}
		s.until = now.Add(lock)
	}
}

// evict drops forgotten keys, and if that is not enough, unlocked ones,
// down to nine tenths of the bound so that it runs seldom.
func (g *guard) evict(now time.Time) {
	for k, s := range g.keys {
		if now.Sub(s.last) > failureMemory {
			delete(g.keys, k)
		}
	}
	for k, s := range g.keys {
		if len(g.keys) < maxTracked*9/10 {
			return
		}
		if !s.until.After(now) {
			delete(g.keys, k)
		}
	}
}

// succeed clears the account's and the address's failures after the right
// password: the person at that address knew it.
func (g *guard) succeed(account, address string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.keys, accountKey(account))
	delete(g.keys, "address:"+address)
}

// refuseLocked answers a sign-in during a lock: 429, Retry-After, and the
// time to come back. The password was not checked.
func (h *handler) refuseLocked(c echo.Context, name, next string, until time.Time) error {
	wait := max(int(math.Ceil(time.Until(until).Seconds())), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
	msg := fmt.Sprintf("Too many failed sign-ins for this name or from your network. "+
		"Sign-in is locked until %s UTC (in %s); the password was not checked.",
		until.UTC().Format("15:04:05"), (time.Duration(wait) * time.Second).String())
	return h.render(c, http.StatusTooManyRequests, "login", loginPage{page: h.page(c, "Instructor sign-in"),
		Name: name, Next: next, Error: msg})
}
