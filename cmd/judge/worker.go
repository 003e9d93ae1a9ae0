package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/queue"
	"ctrljudge/judge/records"
	"ctrljudge/web"
)

// cmdWorker judges submissions from the PostgreSQL queue until SIGINT or
// SIGTERM, then drains: it claims nothing more, lets judgements in flight
// finish for the grace period, and hands the rest back to the queue. It
// serves no pages: only /healthz and /metrics, for the orchestrator.
func cmdWorker(args []string) int {
	fs := flag.NewFlagSet("judge worker", flag.ContinueOnError)
	dbURL := fs.String("db", os.Getenv("CTRLJUDGE_DB"), "the records and queue: a postgres:// `URL`, the server's (env CTRLJUDGE_DB)")
	data := fs.String("data", envOr("CTRLJUDGE_DATA", "./data"), "keep the module cache in `DIR` (env CTRLJUDGE_DATA)")
	dir := fs.String("exercises", "", "judge the exercises in `DIR` instead of the built-in ones (the server's)")
	slots := fs.Int("workers", 0, "judge at most `N` submissions at once (default: one per CPU)")
	grace := fs.Duration("grace", queue.DefaultGrace, "on SIGTERM, let judgements in flight run this long, then hand them back")
	addr := fs.String("metrics-addr", envOr("CTRLJUDGE_METRICS_ADDR", "localhost:9464"), "serve /healthz and /metrics on `HOST:PORT`; \"\" for none (env CTRLJUDGE_METRICS_ADDR)")
	jobTimeout := fs.Duration("job-timeout", 0, "cut a judgement short after this long, to judge it again (default: the engine's limit and a minute)")
	rescue := fs.Duration("rescue-after", 0, "judge again a job running this long, taken to be a lost worker's; must exceed --job-timeout (default: it and a minute)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 {
		return fail("worker takes no arguments, got %q", pos)
	}
	if !records.IsURL(*dbURL) {
		return usageErr("usage: judge worker --db postgres://… (workers share the server's PostgreSQL; a SQLite server judges in its own process)")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cat, err := loadCatalog(*dir)
	if err != nil {
		return fail("%v", err)
	}
	db, err := records.Open(*dbURL)
	if err != nil {
		return fail("open records: %v", err)
	}
	defer db.Close()
	if err := os.MkdirAll(*data, 0o750); err != nil {
		return fail("data directory: %v", err)
	}
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(*data, "cache"), Progress: os.Stderr})
	if err != nil {
		return fail("start the judge: %v", err)
	}
	defer eng.Close()
	if err := eng.Warm(context.Background()); err != nil {
		log.Error("warming the Go toolchain", "err", err)
	} else {
		warmCtx, stopWarming := context.WithCancel(context.Background())
		defer stopWarming() // before the engine closes
		go eng.WarmReferences(warmCtx, cat.Exercises)
	}
	w, err := queue.NewWorker(queue.WorkerConfig{DB: db, Catalog: cat, Engine: eng, Slots: *slots, Logger: log,
		JobTimeout: *jobTimeout, RescueAfter: *rescue})
	if err != nil {
		return fail("%v", err)
	}
	metrics := queue.NewMetrics(w.QueueDepth, w.WorkersAlive)
	w.SetMetrics(metrics)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := w.Start(ctx); err != nil {
		return fail("%v", err)
	}
	var hs *http.Server
	if *addr != "" {
		l, err := net.Listen("tcp", *addr)
		if err != nil {
			w.Stop(0)
			return fail("listen: %v", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", web.MetricsHandler(metrics))
		mux.HandleFunc("/healthz", func(rw http.ResponseWriter, r *http.Request) {
			hctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := w.Seen(hctx); err != nil {
				http.Error(rw, `{"ok":false}`, http.StatusServiceUnavailable)
				return
			}
			rw.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(rw, `{"ok":true,"worker":%q,"slots":%d}`+"\n", w.ID(), w.Slots())
		})
		hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(l)
		fmt.Fprintf(os.Stderr, "judge: worker %s judging %d at once (metrics at http://%s/metrics; SIGTERM drains)\n", w.ID(), w.Slots(), l.Addr())
	} else {
		fmt.Fprintf(os.Stderr, "judge: worker %s judging %d at once (SIGTERM drains)\n", w.ID(), w.Slots())
	}
	<-ctx.Done()
	stop() // a second signal kills at once
	log.Info("draining", "grace", *grace)
	if err := w.Stop(*grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("drain", "err", err)
	}
	if hs != nil {
		hs.Close()
	}
	log.Info("stopped")
	return 0
}
