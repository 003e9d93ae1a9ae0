package instructor

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Password guessing. Failures are counted per (account, client address)
// pair and per address; past the free ones, every further failure locks
// that pair (or address) for firstLock, doubling up to maxLock. While
// locked, its attempts are refused before the password is checked, the
// right one too, so "40 wrong, then the right one" finds nothing. No lock
// is per account alone: that would let a stranger's wrong passwords lock
// the owner out from her own address.
//
// What stops guessing from many addresses is a budget of password checks
// per account (accountChecks), shared by every address that has failed
// there lately: past it they are refused for the few seconds until the
// next check is due, never locked. An address with no failures on record
// is always checked and takes nothing from the budget, so however hard the
// account is attacked its owner signs in at the first try from her own
// address. The price is one check per fresh address; the address limit
// (web/limits.go) and the address lock bound what each one adds.
//
// Counts are kept in memory: a restart forgets them, and needs the host.
const (
	pairFreeFailures    = 5  // typos of one account's password from one address before the pair locks
	addressFreeFailures = 10 // more across names: a staff room behind one NAT address mistypes too
	firstLock           = 30 * time.Second
	maxLock             = time.Hour
	// accountChecksBurst checks at once, then one per accountCheckEvery,
	// from addresses that failed on the account: what one address may
	// ask for (instructorSignInBurst and Every in web/limits.go), now for
	// all of them together. An owner who mistyped waits at most 6 s.
	accountChecksBurst = 10
	accountCheckEvery  = 6 * time.Second
	// failureMemory: failures with none newer for this long are forgotten.
	failureMemory = 24 * time.Hour
	// maxTracked bounds the pairs, addresses and accounts remembered;
	// past it, the forgotten and then the unlocked are dropped first.
	maxTracked = 10000
	// maxKeyName bounds the bytes of a typed name kept as a key: no account
	// name is longer (64 characters), and a 100 KiB name must not be kept.
	maxKeyName = 256
)

func keyName(name string) string {
	if len(name) > maxKeyName {
		name = name[:maxKeyName]
	}
	return name
}

// pairKey names an account as tried from an address. Addresses hold no
// space, so the key is unambiguous.
func pairKey(account, address string) string { return "pair:" + address + " " + keyName(account) }

func addressKey(address string) string { return "address:" + address }

// guard counts failed sign-ins per key (pairKey, addressKey) and keeps
// each account's budget of checks.
type guard struct {
	mu       sync.Mutex
	now      func() time.Time
	keys     map[string]*strikes
	accounts map[string]*rate.Limiter // by keyName(account)
}

type strikes struct {
	failures int
	last     time.Time // the latest failure
	until    time.Time // locked until then
}

// guardClock is what guards read the time from; a test freezes it, so
// that a slow machine's bcrypt checks neither refill budgets nor end locks.
var guardClock = time.Now

func newGuard() *guard {
	return &guard{now: guardClock, keys: map[string]*strikes{}, accounts: map[string]*rate.Limiter{}}
}

// A refusal says until when an attempt is refused; slowed when the
// account's budget ran out rather than a lock.
type refusal struct {
	until  time.Time
	slowed bool
}

func (r refusal) refused() bool { return !r.until.IsZero() }

// begin starts an attempt on account from address. If the pair or the
// address is locked, or the address failed here before and the account's
// budget is spent, it returns the refusal. Otherwise it counts the attempt
// as a failure already, so that attempts racing in parallel count too;
// succeed takes it back.
func (g *guard) begin(account, address string) refusal {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	pair, addr := pairKey(account, address), addressKey(address)
	var r refusal
	for _, k := range []string{pair, addr} {
		if s := g.keys[k]; s != nil && s.until.After(now) && s.until.After(r.until) {
			r.until = s.until
		}
	}
	if r.refused() {
		return r
	}
	if g.failing(pair, now) || g.failing(addr, now) {
		b := g.budget(account, now)
		if !b.AllowN(now, 1) {
			wait := time.Duration((1 - b.TokensAt(now)) * float64(accountCheckEvery))
			return refusal{until: now.Add(max(wait, time.Second)), slowed: true}
		}
	}
	g.fail(pair, pairFreeFailures, now)
	g.fail(addr, addressFreeFailures, now)
	return refusal{}
}

// failing says whether key has failures not yet forgotten.
func (g *guard) failing(key string, now time.Time) bool {
	s := g.keys[key]
	return s != nil && s.failures > 0 && now.Sub(s.last) <= failureMemory
}

// budget is account's bucket of checks, made full when first needed.
func (g *guard) budget(account string, now time.Time) *rate.Limiter {
	name := keyName(account)
	b := g.accounts[name]
	if b == nil {
		if len(g.accounts) >= maxTracked {
			g.evictBudgets(now)
		}
		b = rate.NewLimiter(rate.Every(accountCheckEvery), accountChecksBurst)
		g.accounts[name] = b
	}
	return b
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

// evictBudgets drops full buckets, which remember nothing; then any, as
// the pairs' locks still hold.
func (g *guard) evictBudgets(now time.Time) {
	for k, b := range g.accounts {
		if b.TokensAt(now) >= accountChecksBurst {
			delete(g.accounts, k)
		}
	}
	for k := range g.accounts {
		if len(g.accounts) < maxTracked*9/10 {
			return
		}
		delete(g.accounts, k)
	}
}

// succeed clears the pair's and the address's failures after the right
// password: the person at that address knew it. Other addresses' failures
// on the account stay.
func (g *guard) succeed(account, address string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.keys, pairKey(account, address))
	delete(g.keys, addressKey(address))
}

// refuse answers a sign-in during a lock or a slow-down: 429,
// Retry-After, and the time to come back. The password was not checked.
func (h *handler) refuse(c echo.Context, name, next string, r refusal) error {
	wait := max(int(math.Ceil(time.Until(r.until).Seconds())), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
	in := (time.Duration(wait) * time.Second).String()
	msg := fmt.Sprintf("Too many failed sign-ins from your network, for this name or in all. "+
		"Sign-in from here is locked until %s UTC (in %s); the password was not checked.",
		r.until.UTC().Format("15:04:05"), in)
	if r.slowed {
		msg = fmt.Sprintf("Many sign-ins to this name have failed lately, so they are slowed down: "+
			"try again in %s. The password was not checked.", in)
	}
	return h.render(c, http.StatusTooManyRequests, "login", loginPage{page: h.page(c, "Instructor sign-in"),
		Name: name, Next: next, Error: msg})
}
