package web

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"
)

// Limits per client address (see clientKey), as token buckets: Burst
// requests at once, then one per Every. A class shares one NAT address, so
// each burst fits a class of 30 acting at the same moment; what stops a
// flood is the refill rate, and for the queue, its per-address share
// (maxPendingPerAddress in queue.go).
const (
	// Learner sign-in (name + join code): 30 learners joining at the start
	// of a lesson, with typos to spare; then one every 2 s. A join code is
	// 8 characters of 32 (2^40), so 30 guesses a minute find nothing, and
	// 200 guesses in 0.2 s get 40 answers and 160 refusals.
	signInBurst = 40
	signInEvery = 2 * time.Second
	// Instructor sign-in: instructors are few. The locks and the
	// per-account budget in web/instructor stop guessing; this bounds the bcrypt work
	// (about a quarter of a core-second each) one address can ask for.
	instructorSignInBurst = 10
	instructorSignInEvery = 6 * time.Second
	// Submissions: 30 learners pressing Run and then Submit at once, with a
	// retry each; sustained, one a second is more than two cores judge, so
	// an honest class meets the queue's limits first, never this one.
	submitBurst = 90
	submitEvery = time.Second
	// Drafts: the page saves 800 ms after typing stops, about one a second
	// per learner at most; 30 learners typing behind one address fit.
	draftBurst = 120
	draftEvery = 50 * time.Millisecond
	// limiterIdle is how long an address's bucket is kept unused; longer
	// than the slowest refill (90 × 1 s), so forgetting grants nothing.
	limiterIdle = 5 * time.Minute
)

// Clean-up of anonymous learners who left nothing behind (records.
// PruneAbandonedLearners): a week lets a returning visitor keep a session
// that has drafts; hourly keeps a flood's rows from lingering.
const (
	anonymousIdle = 7 * 24 * time.Hour
	cleanupEvery  = time.Hour
)

// limit refuses a client address's requests beyond burst at once and one
// per every after that, with 429 and Retry-After (the time one request
// takes to come back).
func limit(burst int, every time.Duration, what string) echo.MiddlewareFunc {
	return limitWith(newLimitStore(burst, every), every, what)
}

// newLimitStore is a bucket per client address for limitWith.
func newLimitStore(burst int, every time.Duration) *middleware.RateLimiterMemoryStore {
	return middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
		Rate: rate.Every(every), Burst: burst, ExpiresIn: limiterIdle,
	})
}

// notJudgedCharge is what an attempt a wall-clock net cut short costs its
// sender's address, in submissions: it held a worker for up to
// judge.MaxJudgeTime, and a verdict within the step budgets never meets
// the net, so only code that can buy server time free would gain from
// it being free.
const notJudgedCharge = 30

// charge takes n requests' worth from addr's bucket in store (as far as
// it holds them).
func charge(store *middleware.RateLimiterMemoryStore, addr string, n int) {
	for range n {
		if ok, _ := store.Allow(addr); !ok {
			return
		}
	}
}

// limitWith is limit on a store the caller keeps, to charge it for more
// than requests.
func limitWith(store *middleware.RateLimiterMemoryStore, every time.Duration, what string) echo.MiddlewareFunc {
	wait := int(math.Ceil(every.Seconds()))
	msg := fmt.Sprintf("too many %s from your network; try again in %d s", what, wait)
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               store,
		IdentifierExtractor: func(c echo.Context) (string, error) { return clientKey(c), nil },
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
			return echo.NewHTTPError(http.StatusTooManyRequests, msg)
		},
	})
}

// clientKey is the client's address as limits count it: the IPv4 address,
// or the IPv6 /64, which one household or host can change at will within.
// c.RealIP is the socket's address unless a trusted proxy forwarded the
// request (ipExtractor).
func clientKey(c echo.Context) string {
	addr := c.RealIP()
	ip := net.ParseIP(addr)
	if ip == nil {
		return addr
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// ParseTrustedProxies reads a comma- or space-separated list of CIDR
// ranges or single addresses (10.0.0.0/8, 127.0.0.1, ::1).
func ParseTrustedProxies(list string) ([]*net.IPNet, error) {
	var nets []*net.IPNet
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if !strings.Contains(f, "/") {
			ip := net.ParseIP(f)
			if ip == nil {
				return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR range", f)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			nets = append(nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
		}
		nets = append(nets, n)
	}
	return nets, nil
}

// ParsePublicURL checks the public URL: http or https with a host; "" is
// allowed (no URL set).
func ParsePublicURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("public URL %q: want http:// or https:// and a host", s)
	}
	return u, nil
}

// ipExtractor believes X-Forwarded-For only from the trusted proxies, and
// nothing else: echo's defaults would trust any private or loopback
// address, which a learner on the campus network has.
func (s *Server) ipExtractor() echo.IPExtractor {
	if len(s.proxies) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range s.proxies {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// fromTrustedProxy says whether the socket's peer is a trusted proxy.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	for _, n := range s.proxies {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// secure says whether the browser reached us over https: the public URL
// is https, we terminate TLS ourselves, or a trusted proxy says so. A
// header from anyone else proves nothing.
func (s *Server) secure(c echo.Context) bool {
	if s.httpsOnly || c.IsTLS() {
		return true
	}
	r := c.Request()
	proto, _, _ := strings.Cut(r.Header.Get(echo.HeaderXForwardedProto), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https") && s.fromTrustedProxy(r)
}

// secureCookies marks every cookie the response sets Secure when the
// browser reached us over https: ours, the CSRF middleware's and the
// instructor pages', without each having to know how to tell.
func (s *Server) secureCookies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.secure(c) {
			res := c.Response()
			res.Before(func() {
				cks := res.Header()["Set-Cookie"]
				for i, v := range cks {
					if ck, err := http.ParseSetCookie(v); err == nil && !ck.Secure {
						ck.Secure = true
						cks[i] = ck.String()
					}
				}
			})
		}
		return next(c)
	}
}

// cleanUp deletes abandoned anonymous learners now and every cleanupEvery
// until shutdown.
func (s *Server) cleanUp() {
	defer s.background.Done()
	t := time.NewTicker(cleanupEvery)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if n, err := s.db.PruneAbandonedLearners(ctx, anonymousIdle); err != nil {
			s.log.Warn("clean up anonymous learners", "err", err)
		} else if n > 0 {
			s.log.Info("cleaned up anonymous learners who left nothing behind", "count", n)
		}
		if err := s.db.PruneSessions(ctx); err != nil {
			s.log.Warn("prune sessions", "err", err)
		}
		cancel()
		select {
		case <-t.C:
		case <-s.closing:
			return
		}
	}
}
