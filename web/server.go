package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"ctrljudge/judge"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/verdict"
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
	DefaultShutdownGrace = 20 * time.Second
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
	// PostgreSQL (see WorkerConfig); 0 means the defaults.
	JobTimeout, RescueAfter time.Duration
}

// Server is the web server: pages, assets, drafts and judging.
type Server struct {
	e       *echo.Echo
	db      *records.DB
	eng     judger
	cat     *exercise.Catalog
	docs    *docs
	pages   pages
	assets  *assets
	q       *queue
	streams *streamGate // open event streams, capped
	log     *slog.Logger
	epoch   string // this run's prefix for event ids

	proxies   []*net.IPNet // trusted reverse proxies
	httpsOnly bool         // the public URL is https: every cookie is Secure

	remote  *remote  // the PostgreSQL queue; nil on SQLite
	metrics *Metrics // served at /metrics by MetricsHandler
	// submitLimit is the submissions' bucket per address, kept to charge
	// it for attempts that ended not judged.
	submitLimit *middleware.RateLimiterMemoryStore
	local       int // worker goroutines in this process (SQLite)
	connCap     int // connections Serve allows at once; 0: from the file limit (maxConns)

	workers      sync.WaitGroup
	stopFollow   context.CancelFunc
	judgeCtx     context.Context // cancelled when shutdown's grace runs out
	stopJudging  context.CancelFunc
	closing      chan struct{}  // closed once judging has stopped: streams end
	background   sync.WaitGroup // the clean-up loop
	shutdownOnce sync.Once
}

// New builds a server, starts its workers and queues again the submissions
// a previous run left unfinished.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil || cfg.Catalog == nil || cfg.Engine == nil {
		return nil, errors.New("web: config needs DB, Catalog and Engine")
	}
	return newServer(cfg, cfg.Engine)
}

func newServer(cfg Config, eng judger) (*Server, error) {
	s := &Server{db: cfg.DB, eng: eng, cat: cfg.Catalog, log: cfg.Logger, closing: make(chan struct{}),
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
	capacity := cfg.QueueCap
	if capacity <= 0 {
		capacity = defaultQueueCap
	}
	s.q = newQueue(capacity)
	s.streams = newStreamGate()
	s.judgeCtx, s.stopJudging = context.WithCancel(context.Background())
	s.submitLimit = newLimitStore(submitBurst, submitEvery)
	s.e = s.routes()
	instructor.Register(s.e.Group("/instructor"), instructor.Deps{
		DB: cfg.DB, Catalog: cfg.Catalog, Enqueue: s.Enqueue,
		ClientKey: clientKey, SignInLimit: limit(instructorSignInBurst, instructorSignInEvery, "sign-in attempts"),
		SiteURL: s.siteURL(pub)})
	n := cfg.Workers
	if n <= 0 || n > runtime.NumCPU() {
		n = runtime.NumCPU()
	}
	// Served by MetricsHandler on an address of its own, not by s.e: the
	// public address need not tell anyone the process's figures.
	s.metrics = NewMetrics(s.queueDepth, s.workersAlive)
	if cfg.DB.Postgres() {
		if err := s.startRemote(cfg, eng); err != nil {
			return nil, err
		}
	} else {
		s.local = n
	}
	if err := s.recoverUnfinished(); err != nil {
		s.closeRemote()
		return nil, err
	}
	if s.remote != nil {
		// One goroutine hands jobs to the queue; workers anywhere judge.
		s.workers.Add(1)
		go s.forward()
		var ctx context.Context
		ctx, s.stopFollow = context.WithCancel(context.Background())
		s.background.Add(1)
		go s.follow(ctx)
	} else {
		for range n {
			s.workers.Add(1)
			go s.work()
		}
	}
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
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		code, body := s.health(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(body)
	})
	return mux
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

		for _, j := range s.q.close() {
			s.abandon(j, "server shutting down")
		}
		workersDone := make(chan struct{})
		go func() { s.workers.Wait(); close(workersDone) }()
		select {
		case <-workersDone:
		case <-time.After(grace):
			s.log.Warn("grace period over; cancelling judgements in flight")
			s.stopJudging()
			select {
			case <-workersDone:
			case <-ctx.Done():
				s.log.Error("judgements did not stop in time")
			}
		case <-ctx.Done():
			s.stopJudging()
		}
		s.stopJudging()
		if s.remote != nil {
			// Judgements elsewhere go on and are stored; this process's
			// own worker drains, and its streams see what it finished.
			if s.remote.local != nil {
				s.remote.local.Stop(grace)
			}
			s.stopFollow()
		}
		close(s.closing)
		s.background.Wait()
		s.closeRemote()
		err = <-httpDone
	})
	return err
}

// recoverUnfinished queues again what a previous run admitted and never
// finished.
func (s *Server) recoverUnfinished() error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	subs, err := s.db.Unfinished(ctx)
	if err != nil {
		return fmt.Errorf("find unfinished submissions: %w", err)
	}
	for _, sub := range subs {
		ex, err := s.cat.Find(sub.Exercise)
		if err != nil {
			if err := s.db.AbandonSubmission(ctx, sub.ID, "the exercise no longer exists"); err != nil {
				return fmt.Errorf("settle submission %d: %w", sub.ID, err)
			}
			continue
		}
		j := newJob(sub.ID, sub.LearnerID, ex, sub.Mode, []byte(sub.Code), sub.Seed)
		j.running = sub.State == records.StateRunning
		j.rejudge = sub.RejudgeOf != 0
		s.q.recover(j)
	}
	if len(subs) > 0 {
		s.log.Info("queued unfinished submissions again", "count", len(subs))
	}
	return nil
}

// Enqueue queues a re-judge that the instructor pages created in the
// records. Re-judges share the queue's cap but not a learner's allowance.
func (s *Server) Enqueue(sub *records.Submission) error {
	ex, err := s.cat.Find(sub.Exercise)
	if err != nil {
		return fmt.Errorf("re-judge %d: %w", sub.ID, err)
	}
	j := newJob(sub.ID, sub.LearnerID, ex, sub.Mode, []byte(sub.Code), sub.Seed)
	j.rejudge = true
	return s.q.pushRejudge(j)
}

func (s *Server) work() {
	defer s.workers.Done()
	for j := s.q.pop(); j != nil; j = s.q.pop() {
		s.judgeJob(j)
	}
}

// judgeJob judges one job, stores the result and publishes the final event.
func (s *Server) judgeJob(j *job) {
	if !j.running {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := s.db.StartSubmission(ctx, j.id); err != nil {
			s.log.Error("start submission", "id", j.id, "err", err)
		}
		cancel()
	}

	start := time.Now()
	// The engine's own safety net, here around the build as well.
	jctx, cancel := context.WithTimeout(s.judgeCtx, judge.MaxJudgeTime)
	v := s.safeJudge(jctx, judge.Submission{
		Exercise: j.ex, Code: j.code, FileName: j.ex.FileName(), Mode: j.engineMode(), Only: j.only, Seed: j.seed,
		Progress: func(ev verdict.Event) { s.progress(j, ev) },
	})
	cancel()
	v = j.asRun(v)
	ms := time.Since(start).Milliseconds()
	if s.judgeCtx.Err() != nil {
		s.abandon(j, "server shutting down")
		return
	}
	if v == nil {
		v = internalError(j.mode, "the judge returned no verdict")
	}
	if v.Outcome == verdict.OutcomeNotJudged {
		// The clock stopped it, not the code: nothing is stored or
		// charged to the grade; it is judged again once the line is
		// empty. The attempt does count against the sender's rate, so
		// that such attempts cannot buy unlimited server time.
		if j.addr != "" {
			charge(s.submitLimit, j.addr, notJudgedCharge)
		}
		if j.attempts++; j.attempts < maxJudgeAttempts {
			j.running = true
			j.publish("retrying", map[string]any{"attempt": j.attempts + 1, "note": v.Message})
			s.q.retry(j)
			return
		}
		s.abandon(j, "the judge was too busy to finish it; it was not counted, please submit again later")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.db.FinishSubmission(ctx, j.id, v, ms); err != nil {
		s.log.Error("finish submission", "id", j.id, "err", err)
		s.abandon(j, "the result could not be saved")
		return
	}
	s.metrics.observe(v, time.Duration(ms)*time.Millisecond, time.Since(j.queuedAt))
	j.publish("done", s.doneEvent(v, ms))
	s.q.finish(j)
}

func (s *Server) safeJudge(ctx context.Context, sub judge.Submission) *verdict.Verdict {
	return safeJudge(ctx, s.eng, s.log, sub)
}

// safeJudge keeps a panic in the engine from taking the process down: it
// becomes an internal error, which does not count against the learner.
func safeJudge(ctx context.Context, eng judger, log *slog.Logger, sub judge.Submission) (v *verdict.Verdict) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("the judge panicked", "exercise", sub.Exercise.Slug, "panic", r)
			v = internalError(sub.Mode, "the judge failed; this attempt does not count")
		}
	}()
	return eng.Judge(ctx, sub)
}

// closeRemote closes the connection to the PostgreSQL queue, if any.
func (s *Server) closeRemote() {
	if s.remote != nil {
		if s.remote.local != nil {
			s.remote.local.Stop(0)
		}
		s.remote.pool.Close()
	}
}

// workersAlive counts the worker goroutines that judge: this process's on
// SQLite; on PostgreSQL, those of every worker seen lately.
func (s *Server) workersAlive(ctx context.Context) (int, error) {
	if s.remote == nil {
		return s.local, nil
	}
	_, slots, err := s.db.WorkersAlive(ctx, workerAliveWithin)
	return slots, err
}

func internalError(mode verdict.Mode, msg string) *verdict.Verdict {
	return &verdict.Verdict{Version: 3, Status: verdict.StatusError, Outcome: verdict.OutcomeInternalError,
		Message: msg, Mode: mode, Engine: judge.EngineVersion}
}

// abandon settles a job as not judged: the learner is not charged.
func (s *Server) abandon(j *job, note string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.db.AbandonSubmission(ctx, j.id, note); err != nil {
		s.log.Error("abandon submission", "id", j.id, "err", err)
	}
	j.publish("not_judged", map[string]string{"note": note})
	s.q.finish(j)
}

// progress turns the engine's events into stream events.
func (s *Server) progress(j *job, ev verdict.Event) {
	switch ev.Phase {
	case verdict.PhaseCompiling:
		j.publish("compiling", struct{}{})
	case verdict.PhaseRunning:
		j.publish("running", map[string]any{"index": ev.Index, "total": ev.Total, "name": ev.Name})
	case verdict.PhaseTest:
		if ev.Test == nil {
			return
		}
		j.publish("test", map[string]any{
			"index": ev.Index, "total": ev.Total, "name": ev.Test.Name,
			"status": ev.Test.Status, "html": s.renderPart("card", newCard(ev.Index, ev.Test)),
		})
	}
}
