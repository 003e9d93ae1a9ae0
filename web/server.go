package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/queue"
	"ctrljudge/judge/records"
	"ctrljudge/web/instructor"
)

// Time limits.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second // event streams clear it
	idleTimeout       = 2 * time.Minute
	storeTimeout      = 10 * time.Second // one records call made outside a request
	// DefaultShutdownGrace is how long in-flight judgements may run on
	// once shutdown starts.
	DefaultShutdownGrace = queue.DefaultGrace
)

// Config configures a Server.
type Config struct {
	DB      *records.DB
	Catalog *exercise.Catalog
	Engine  *judge.Engine
	// Workers judging at once; 0 or more than the CPUs means one per CPU.
	Workers int
	// QueueCap is how many submissions may wait; 0 means a default.
	QueueCap int
	Logger   *slog.Logger
	// PublicURL is the address browsers use, such as
	// https://judge.example.edu; an https URL makes every cookie Secure.
	PublicURL string
	// TrustedProxies are the reverse proxies in front of the server: only
	// their X-Forwarded-For (the client address that limits count) and
	// X-Forwarded-Proto are believed.
	TrustedProxies []*net.IPNet
	// JudgeElsewhere, with the records on PostgreSQL, leaves all judging
	// to `judge worker` processes: the server runs no worker of its own.
	// (On PostgreSQL Workers is the server's own worker's slots.)
	JudgeElsewhere bool
	// JobTimeout and RescueAfter tune the server's own worker on
	// PostgreSQL (see queue.WorkerConfig); 0 means the defaults.
	JobTimeout, RescueAfter time.Duration
}

// Server is the web server: pages, assets, drafts, and the streams of
// the judging queue's events.
type Server struct {
	e       *echo.Echo
	db      *records.DB
	cat     *exercise.Catalog
	docs    *docs
	pages   pages
	assets  *assets
	q       queue.Queue
	streams *streamGate // open event streams, capped
	log     *slog.Logger
	epoch   string // this run's prefix for event ids

	proxies   []*net.IPNet // trusted reverse proxies
	httpsOnly bool         // the public URL is https: every cookie is Secure

	metrics *queue.Metrics // served at /metrics by MetricsHandler
	// submitLimit is the submissions' bucket per address, kept to charge
	// it for attempts that ended not judged.
	submitLimit *middleware.RateLimiterMemoryStore
	connCap     int // connections Serve allows at once; 0: from the file limit (maxConns)

	closing      chan struct{}  // closed once judging has stopped: streams end
	background   sync.WaitGroup // the clean-up loop
	shutdownOnce sync.Once
}

// New builds a server, starts its judging queue and queues again the
// submissions a previous run left unfinished.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil || cfg.Catalog == nil || cfg.Engine == nil {
		return nil, errors.New("web: config needs DB, Catalog and Engine")
	}
	return newServer(cfg, cfg.Engine)
}

func newServer(cfg Config, eng queue.Judger) (*Server, error) {
	s := &Server{db: cfg.DB, cat: cfg.Catalog, log: cfg.Logger, closing: make(chan struct{}),
		epoch: strconv.FormatInt(time.Now().UnixNano(), 36)}
	if s.log == nil {
		s.log = slog.Default()
	}
	pub, err := ParsePublicURL(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	s.httpsOnly = pub != nil && pub.Scheme == "https"
	s.proxies = cfg.TrustedProxies
	if s.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if s.docs, err = renderCatalog(newMarkdown(), cfg.Catalog); err != nil {
		return nil, err
	}
	if s.pages, err = parsePages(templateFuncs(s.assets.url)); err != nil {
		return nil, err
	}
	s.streams = newStreamGate()
	s.submitLimit = newLimitStore(submitBurst, submitEvery)
	// Served by MetricsHandler on an address of its own, not by s.e: the
	// public address need not tell anyone the process's figures.
	s.metrics = queue.NewMetrics(func(ctx context.Context) (int, error) { return s.q.Depth(ctx) },
		func(ctx context.Context) (int, error) { return s.q.WorkersAlive(ctx) })
	s.q, err = queue.Open(queue.Config{DB: cfg.DB, Catalog: cfg.Catalog, Engine: eng, Logger: s.log, Metrics: s.metrics,
		Cap: cfg.QueueCap, Workers: cfg.Workers, JudgeElsewhere: cfg.JudgeElsewhere,
		JobTimeout: cfg.JobTimeout, RescueAfter: cfg.RescueAfter,
		Charge: func(addr string) { charge(s.submitLimit, addr, notJudgedCharge) }})
	if err != nil {
		return nil, err
	}
	s.e = s.routes()
	instructor.Register(s.e.Group("/instructor"), instructor.Deps{
		DB: cfg.DB, Catalog: cfg.Catalog, Rejudge: s.q.Rejudge,
		ClientKey: clientKey, SignInLimit: limit(instructorSignInBurst, instructorSignInEvery, "sign-in attempts"),
		SiteURL: s.siteURL(pub)})
	s.background.Add(1)
	go s.cleanUp()
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.e }

// MetricsHandler serves /metrics and /healthz, and nothing else, for the
// metrics address (`judge serve --metrics-addr`): the orchestrator and
// Prometheus reach it, learners do not. The server's own worker, if any,
// counts into the same metrics.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", MetricsHandler(s.metrics))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		code, body := s.health(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(body)
	})
	return mux
}

// MetricsHandler serves m in Prometheus's text format: the server's, or a
// `judge worker`'s.
func MetricsHandler(m *queue.Metrics) http.Handler {
	return promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{Registry: m.Registry(), DisableCompression: true})
}

// Echo returns the echo instance, for mounting more routes.
func (s *Server) Echo() *echo.Echo { return s.e }

// Serve serves HTTP on l until Shutdown, with at most maxConns
// connections open at once.
func (s *Server) Serve(l net.Listener) error {
	l = s.limitConns(l)
	hs := s.e.Server
	hs.Handler = s.e
	hs.ReadHeaderTimeout = readHeaderTimeout
	hs.ReadTimeout = readTimeout
	hs.WriteTimeout = writeTimeout
	hs.IdleTimeout = idleTimeout
	hs.MaxHeaderBytes = 64 << 10
	s.e.Listener = l
	err := hs.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections and submissions, settles every job
// still waiting as not judged, lets running judgements finish for grace
// (then cancels them and settles them as not judged), ends the event
// streams and waits for requests to finish until ctx is done. The caller
// closes the database afterwards.
func (s *Server) Shutdown(ctx context.Context, grace time.Duration) error {
	var err error
	s.shutdownOnce.Do(func() {
		httpDone := make(chan error, 1)
		go func() { httpDone <- s.e.Server.Shutdown(ctx) }()
		s.q.Close(ctx, grace)
		close(s.closing)
		s.background.Wait()
		err = <-httpDone
	})
	return err
}
