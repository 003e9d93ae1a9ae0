package queue

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"ctrljudge/judge/verdict"
)

// Metrics are a process's Prometheus metrics, served at /metrics by the
// server and by `judge worker`: verdicts by outcome (their rate is
// verdicts per second), judging time and verdict latency (queued to
// verdict), and, read when scraped, queue depth and workers alive. The
// commands serve Registry over HTTP.
type Metrics struct {
	reg      *prometheus.Registry
	verdicts *prometheus.CounterVec
	judging  prometheus.Histogram
	latency  prometheus.Histogram
}

// latencyBuckets span a quick run (a second) to the engine's safety net (minutes).
var latencyBuckets = []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300, 600}

// NewMetrics makes a registry with the process's metrics. depth and
// alive, if not nil, are read at each scrape; an error leaves the gauge
// at -1.
func NewMetrics(depth, alive func(context.Context) (int, error)) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ctrljudge_verdicts_total", Help: "Verdicts stored by this process, by outcome.",
		}, []string{"outcome"}),
		judging: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ctrljudge_judge_seconds", Help: "Time to judge one submission (build and tests).", Buckets: latencyBuckets,
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ctrljudge_verdict_latency_seconds", Help: "Time from a submission's arrival to its stored verdict.", Buckets: latencyBuckets,
		}),
	}
	m.reg.MustRegister(m.verdicts, m.judging, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, f func(context.Context) (int, error)) {
		if f == nil {
			return
		}
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			n, err := f(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		}))
	}
	gauge("ctrljudge_queue_depth", "Submissions waiting for a worker.", depth)
	gauge("ctrljudge_workers_alive", "Judge worker slots alive: goroutines that judge, in every process.", alive)
	return m
}

// Registry holds the metrics, for an HTTP handler to serve.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// observe counts a stored verdict; a nil Metrics counts nothing.
func (m *Metrics) observe(v *verdict.Verdict, judging, latency time.Duration) {
	if m == nil || v == nil {
		return
	}
	m.verdicts.WithLabelValues(string(v.Outcome)).Inc()
	m.judging.Observe(judging.Seconds())
	if latency > 0 {
		m.latency.Observe(latency.Seconds())
	}
}
