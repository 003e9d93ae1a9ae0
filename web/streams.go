package web

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/netutil"

	"ctrljudge/judge/queue"
)

// Caps on open event streams. A stream holds a connection, a file
// descriptor and a goroutine for as long as its submission is judged, so
// nothing but these bounds how many one person can hold. An honest class
// is 30 learners behind one NAT address, each with a tab or two on an
// exercise; a page follows one submission at a time, and a learner may
// have queue.MaxPendingPerLearner waiting. A reconnecting EventSource can
// overlap its old connection for a moment, so each figure counts it twice.
const (
	// One submission: two tabs on it, each with a reconnect in flight,
	// and a spare.
	streamsPerSubmission = 6
	// One learner: two tabs following each of their waiting submissions,
	// doubled for reconnects.
	streamsPerLearner = 2 * queue.MaxPendingPerLearner * 2
	// One address: the class of 30 with two tabs each, doubled for
	// reconnects, and doubled again so that two classes sharing a
	// building's address still fit.
	streamsPerAddress = 30 * 2 * 2 * 2
	// In all: several such classes at once. Serve lowers it to half of
	// the connections it allows, so streams alone never fill the process.
	maxStreams = 2000
	// streamRetryAfter is the wait a refusal suggests: about the time a
	// judgement takes, after which streams of finished ones are gone.
	streamRetryAfter = 10
)

// streamGate counts open event streams by submission, learner and client
// address, and in all. Entries are deleted when their count reaches zero,
// so the maps hold only what is open.
type streamGate struct {
	mu     sync.Mutex
	total  int
	limit  int // the cap in all
	bySub  map[int64]int
	byLrn  map[int64]int
	byAddr map[string]int
}

func newStreamGate() *streamGate {
	return &streamGate{limit: maxStreams, bySub: map[int64]int{}, byLrn: map[int64]int{}, byAddr: map[string]int{}}
}

// acquire counts a stream, or refuses it with the reason; release must
// follow an acquire that returned nil.
func (g *streamGate) acquire(sub, learner int64, addr string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var msg string
	switch {
	case g.bySub[sub] >= streamsPerSubmission:
		msg = fmt.Sprintf("this submission already has %d progress streams open; close other tabs showing it", streamsPerSubmission)
	case g.byLrn[learner] >= streamsPerLearner:
		msg = fmt.Sprintf("you already have %d progress streams open; close some tabs", streamsPerLearner)
	case g.byAddr[addr] >= streamsPerAddress:
		msg = fmt.Sprintf("too many progress streams are open from your network (%d)", streamsPerAddress)
	case g.total >= g.limit:
		msg = "the server is following too many submissions at once"
	default:
		g.total++
		g.bySub[sub]++
		g.byLrn[learner]++
		g.byAddr[addr]++
		return nil
	}
	return &echo.HTTPError{Code: http.StatusTooManyRequests,
		Message: msg + "; try again in " + strconv.Itoa(streamRetryAfter) + " s or reload the page"}
}

func (g *streamGate) release(sub, learner int64, addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.bySub[sub]--; g.bySub[sub] <= 0 {
		delete(g.bySub, sub)
	}
	if g.byLrn[learner]--; g.byLrn[learner] <= 0 {
		delete(g.byLrn, learner)
	}
	if g.byAddr[addr]--; g.byAddr[addr] <= 0 {
		delete(g.byAddr, addr)
	}
}

// open is how many streams are open.
func (g *streamGate) open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}

// fit lowers the cap in all to half of conns connections.
func (g *streamGate) fit(conns int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limit = max(min(maxStreams, conns/2), 1)
}

// fdReserve is how many file descriptors the connection cap leaves to the
// rest of the process: the records, the judge's builds (pipes, the cache's
// files) and the logs.
const fdReserve = 512

// maxConns is how many connections Serve keeps open at once, from the
// process's file limit: past it, new connections wait in the kernel's
// backlog rather than failing for want of a descriptor ("too many open
// files"), which would also fail the records and the judge.
func maxConns() int {
	n := openFileLimit()
	if n <= 0 {
		return 0 // unknown: no cap
	}
	if n > 2*fdReserve {
		return n - fdReserve
	}
	return n / 2
}

// limitConns caps l at maxConns and fits the streams' cap under it, so
// that at least half of the connections are left for pages, submissions
// and /healthz whatever the streams do.
func (s *Server) limitConns(l net.Listener) net.Listener {
	n := s.connCap
	if n == 0 {
		n = maxConns()
	}
	if n <= 0 {
		return l
	}
	s.streams.fit(n)
	s.log.Info("connections capped", "connections", n, "event streams", min(maxStreams, n/2))
	return netutil.LimitListener(l, n)
}
