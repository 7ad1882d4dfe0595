package server

import (
	"database/sql"
	"strconv"
	"sync"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/buildinfo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// authFailures counts the requests refused with 401 or 403, by reason (authfailures.go).
	authFailures *prometheus.CounterVec
	// shed counts the requests refused by load shedding, by reason (shedConcurrency,
	// shedDecodeBudget); rateLimited those refused by a key's rate limit.
	shed        *prometheus.CounterVec
	rateLimited prometheus.Counter
	// shedByConcurrency is shed's concurrency series, resolved once: a flood counts it per refusal.
	shedByConcurrency prometheus.Counter
	// databaseFaults counts the requests answered for a failure of the database, by fault
	// (databasefaults.go).
	databaseFaults *prometheus.CounterVec
	// The client connections, when served through LimitConnections (connlimit.go).
	connectionsOpen, connectionsMax prometheus.Gauge
	connectionsIdleClosed           prometheus.Counter
	connectionsRefused              *prometheus.CounterVec

	// seen keeps the series already used, so that a request finds its own without hashing its
	// labels and formatting its status again.
	mu   sync.RWMutex
	seen map[requestLabels]series
}

type series struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

type requestLabels struct {
	operation string
	status    int
}

// The reasons of mgmtapi_requests_shed_total.
const (
	shedConcurrency  = "concurrency"
	shedDecodeBudget = "decode_budget"
)

func newMetrics(reg *prometheus.Registry, dbStats func() sql.DBStats, admission *admission, budget *decodeBudget) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mgmtapi_requests_total",
			Help: "Requests answered, by operation and HTTP status.",
		}, []string{"operation", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mgmtapi_request_duration_seconds",
			Help:    "Time to answer a request, by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mgmtapi_requests_in_flight",
			Help: "Requests being answered now.",
		}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mgmtapi_requests_shed_total",
			Help: "API requests refused with 503 before being read, by reason: concurrency (every slot and the queue taken) or decode_budget (the bodies being decoded at once).",
		}, []string{"reason"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mgmtapi_requests_rate_limited_total",
			Help: "API requests refused with 429 by their key's rate limit.",
		}),
		seen:           map[requestLabels]series{},
		authFailures:   newAuthFailures(reg),
		databaseFaults: newDatabaseFaults(reg),
		connectionsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mgmtapi_connections_open",
			Help: "Client connections open now (counted by the connection cap, --max-connections).",
		}),
		connectionsMax: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mgmtapi_connections_max",
			Help: "The cap on open client connections (--max-connections, or derived from the descriptor limit); 0 when none.",
		}),
		connectionsIdleClosed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mgmtapi_connections_idle_closed_total",
			Help: "Idle keep-alive connections closed to admit a new connection at the cap.",
		}),
		connectionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mgmtapi_connections_refused_total",
			Help: "Connections refused at the cap with none idle, by answer: 503 (the Error body, Retry-After: 1) or closed (too many refusals at once).",
		}, []string{"answer"}),
	}
	for _, reason := range []string{shedConcurrency, shedDecodeBudget} {
		m.shed.WithLabelValues(reason)
	}
	m.shedByConcurrency = m.shed.WithLabelValues(shedConcurrency)
	for _, answer := range []string{"503", "closed"} {
		m.connectionsRefused.WithLabelValues(answer)
	}
	reg.MustRegister(m.shed, m.rateLimited, m.connectionsOpen, m.connectionsMax, m.connectionsIdleClosed, m.connectionsRefused)
	if admission != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mgmtapi_requests_admitted",
				Help: "API requests holding one of the --max-concurrent-requests slots now."},
				func() float64 { return float64(admission.admitted()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mgmtapi_requests_queued",
				Help: "API requests waiting for a slot now."},
				func() float64 { return float64(admission.queued.Load()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mgmtapi_requests_admission_limit",
				Help: "API requests admitted to the handler at once now: --max-concurrent-requests, or less while the adaptive bound (--concurrency-target-latency) has lowered it."},
				func() float64 { return float64(admission.currentLimit()) }))
	}
	if budget != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mgmtapi_decode_budget_bytes_in_use",
			Help: "Request-body bytes of the --decode-budget-bytes budget taken now."},
			func() float64 { return float64(budget.inUse()) }))
	}
	build := buildinfo.Read()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "mgmtapi_build_info",
		Help:        "Always 1; its labels name the running build (module version, VCS revision, Go version).",
		ConstLabels: prometheus.Labels{"version": build.Version, "revision": build.Revision, "goversion": build.GoVersion},
	})
	buildInfo.Set(1)
	reg.MustRegister(m.requests, m.latency, m.inFlight, buildInfo,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if dbStats != nil {
		gauge := func(name, help string, value func(sql.DBStats) float64) prometheus.Collector {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mgmtapi_db_" + name, Help: help},
				func() float64 { return value(dbStats()) })
		}
		counter := func(name, help string, value func(sql.DBStats) float64) prometheus.Collector {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "mgmtapi_db_" + name, Help: help},
				func() float64 { return value(dbStats()) })
		}
		reg.MustRegister(
			gauge("connections_open", "Open connections of the write pool.",
				func(s sql.DBStats) float64 { return float64(s.OpenConnections) }),
			gauge("connections_in_use", "Connections of the write pool in use.",
				func(s sql.DBStats) float64 { return float64(s.InUse) }),
			gauge("connections_idle", "Idle connections of the write pool.",
				func(s sql.DBStats) float64 { return float64(s.Idle) }),
			gauge("connections_max", "Most connections the write pool opens.",
				func(s sql.DBStats) float64 { return float64(s.MaxOpenConnections) }),
			counter("waits_total", "Times a request waited for a connection.",
				func(s sql.DBStats) float64 { return float64(s.WaitCount) }),
			counter("wait_seconds_total", "Time spent waiting for a connection.",
				func(s sql.DBStats) float64 { return s.WaitDuration.Seconds() }),
		)
	}
	return m
}

func (m *metrics) observe(operation string, status int, elapsed time.Duration) {
	labels := requestLabels{operation, status}
	m.mu.RLock()
	s, ok := m.seen[labels]
	m.mu.RUnlock()
	if !ok {
		s = series{
			count:   m.requests.WithLabelValues(operation, strconv.Itoa(status)),
			latency: m.latency.WithLabelValues(operation),
		}
		m.mu.Lock()
		m.seen[labels] = s
		m.mu.Unlock()
	}
	s.count.Inc()
	s.latency.Observe(elapsed.Seconds())
}
