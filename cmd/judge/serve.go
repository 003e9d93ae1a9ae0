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
	"strings"
	"syscall"
	"time"

	"ctrljudge/judge"
	"ctrljudge/judge/records"
	"ctrljudge/web"
)

// recordsFile is the SQLite file inside the data directory.
const recordsFile = "records.db"

// shutdownSlack is how long requests may take to end after the judging
// grace period.
const shutdownSlack = 10 * time.Second

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// cmdServe runs the web server until SIGINT or SIGTERM, then shuts down
// gracefully: no new connections or submissions, in-flight judgements
// finish (or are settled as not judged after a grace period), the
// database is closed.
func cmdServe(args []string) int {
	fs := flag.NewFlagSet("judge serve", flag.ContinueOnError)
	addr := fs.String("addr", envOr("CTRLJUDGE_ADDR", "localhost:8080"), "listen on `HOST:PORT` (env CTRLJUDGE_ADDR)")
	data := fs.String("data", envOr("CTRLJUDGE_DATA", "./data"), "keep records and the module cache in `DIR` (env CTRLJUDGE_DATA)")
	dbTarget := fs.String("db", os.Getenv("CTRLJUDGE_DB"),
		"keep the records in `DB`: a postgres:// URL shared with `judge worker`s, or a SQLite file (default DIR/records.db; env CTRLJUDGE_DB)")
	dir := fs.String("exercises", "", "serve the exercises in `DIR` instead of the built-in ones")
	workers := fs.Int("workers", 0, "judge at most `N` submissions at once in this process (default: one per CPU)")
	judgeHere := fs.Bool("judge", true, "judge in this process too; with --db postgres://…, -judge=false leaves judging to `judge worker`s")
	queue := fs.Int("queue", 0, "let at most `N` submissions wait (default 64)")
	// One metrics listener per process: the server's own worker, if any,
	// counts into the server's metrics. A `judge worker` on the same host
	// defaults to the same port, so one of the two needs another.
	metricsAddr := fs.String("metrics-addr", envOr("CTRLJUDGE_METRICS_ADDR", "localhost:9464"),
		"serve /metrics (and /healthz) on `HOST:PORT`, not on --addr; \"\" for none (env CTRLJUDGE_METRICS_ADDR)")
	grace := fs.Duration("grace", web.DefaultShutdownGrace, "on shutdown, let judgements in flight run this long")
	publicURL := fs.String("public-url", os.Getenv("CTRLJUDGE_PUBLIC_URL"),
		"the `URL` browsers use, e.g. https://judge.example.edu; https makes cookies Secure (env CTRLJUDGE_PUBLIC_URL)")
	var proxies []string
	if v := os.Getenv("CTRLJUDGE_TRUSTED_PROXIES"); v != "" {
		proxies = append(proxies, v)
	}
	fs.Func("trusted-proxy", "believe X-Forwarded-For and X-Forwarded-Proto only from `CIDR` (repeatable, or comma-separated; env CTRLJUDGE_TRUSTED_PROXIES)",
		func(v string) error {
			if _, err := web.ParseTrustedProxies(v); err != nil {
				return err
			}
			proxies = append(proxies, v)
			return nil
		})
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 0 {
		return fail("serve takes no arguments, got %q", pos)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	trusted, err := web.ParseTrustedProxies(strings.Join(proxies, ","))
	if err != nil {
		return fail("%v", err)
	}
	if _, err := web.ParsePublicURL(*publicURL); err != nil {
		return fail("%v", err)
	}

	cat, err := loadCatalog(*dir)
	if err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(*data, 0o750); err != nil {
		return fail("data directory: %v", err)
	}
	target := *dbTarget
	if target == "" {
		target = filepath.Join(*data, recordsFile)
	}
	db, err := records.Open(target)
	if err != nil {
		return fail("open records: %v", err)
	}
	defer db.Close()
	eng, err := judge.NewEngine(judge.Options{CacheDir: filepath.Join(*data, "cache"), Progress: os.Stderr})
	if err != nil {
		return fail("start the judge: %v", err)
	}
	defer eng.Close()
	// Build the whole standard library for wasip1 now, in the
	// background, not within the first learner's submission; then run
	// each exercise's reference solution, for the same reason.
	warmCtx, stopWarming := context.WithCancel(context.Background())
	defer stopWarming() // before the engine closes
	if *judgeHere {
		go func() {
			if err := eng.Warm(warmCtx); err != nil {
				log.Error("warming the Go toolchain", "err", err)
				return
			}
			// The reference runs the first submissions need, at the
			// seed the server judges with.
			eng.WarmReferences(warmCtx, cat.Exercises)
		}()
	}

	if !*judgeHere && !db.Postgres() {
		return usageErr("-judge=false needs --db postgres://…: with SQLite, the server is the only judge")
	}
	srv, err := web.New(web.Config{DB: db, Catalog: cat, Engine: eng, Workers: *workers, QueueCap: *queue, Logger: log,
		PublicURL: *publicURL, TrustedProxies: trusted, JudgeElsewhere: !*judgeHere})
	if err != nil {
		return fail("%v", err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail("listen: %v", err)
	}
	var ms *http.Server
	metricsAt := ""
	if *metricsAddr != "" {
		ml, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			l.Close()
			return fail("listen on --metrics-addr: %v (another judge's? give it another port, or \"\" for none)", err)
		}
		ms = &http.Server{Handler: srv.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go ms.Serve(ml)
		metricsAt = fmt.Sprintf("metrics at http://%s/metrics; ", ml.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	fmt.Fprintf(os.Stderr, "judge: serving %d exercises at http://%s/ (records in %s; %sCtrl+C stops)\n",
		len(cat.Exercises), l.Addr(), records.Redact(target), metricsAt)

	select {
	case err := <-served:
		if err != nil {
			return fail("serve: %v", err)
		}
		return 0
	case <-ctx.Done():
	}
	stop() // a second Ctrl+C kills at once
	log.Info("shutting down", "grace", *grace)
	sctx, cancel := context.WithTimeout(context.Background(), *grace+shutdownSlack)
	defer cancel()
	if err := srv.Shutdown(sctx, *grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown", "err", err)
	}
	<-served
	if ms != nil {
		ms.Close() // last: /healthz answers while judgements drain
	}
	log.Info("stopped")
	return 0
}
