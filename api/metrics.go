package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/hub"
)

// timeNow is the clock of rate limits and latencies.
var timeNow = time.Now

// metrics are the HTTP side's Prometheus series.
type metrics struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	submissions *prometheus.CounterVec
	quarantined *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, h *hub.Hub) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rankwire_http_requests_total", Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rankwire_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		submissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rankwire_submissions_total", Help: "Submitted items by outcome: applied, kept (the policy kept the old entry), duplicate, quarantined (a board's rules held it, or refused it with the quarantine full).",
		}, []string{"outcome"}),
		quarantined: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rankwire_submissions_quarantined_total", Help: "Submitted items a board's rules held, by rule (quarantine_full: refused, the board's quarantine being full). Counted by the node that accepted the write.",
		}, []string{"rule"}),
	}
	for _, r := range hub.Reasons {
		m.quarantined.WithLabelValues(r.String()) // every rule's series exists from the start, for rate()
	}
	reg.MustRegister(m.requests, m.latency, m.submissions, m.quarantined, newHubCollector(h), newNATSCollector(h), newTenantCollector(h), newWarnCollector(h))
	return m
}

func (m *metrics) countResults(rs []hub.Result) {
	for _, r := range rs {
		switch {
		case r.Duplicate:
			m.submissions.WithLabelValues("duplicate").Inc()
		case r.Reason != hub.ReasonNone:
			m.submissions.WithLabelValues("quarantined").Inc()
			m.quarantined.WithLabelValues(r.Reason.String()).Inc()
		case r.Applied:
			m.submissions.WithLabelValues("applied").Inc()
		default:
			m.submissions.WithLabelValues("kept").Inc()
		}
	}
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

// Unwrap lets the WebSocket upgrade reach the connection's http.Hijacker
// through this middleware.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// measure counts requests and their latency by route pattern (never by raw
// path: that would make a series per member).
func (s *Server) measure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := timeNow()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		s.metrics.requests.WithLabelValues(route, r.Method, strconv.Itoa(sw.code)).Inc()
		s.metrics.latency.WithLabelValues(route, r.Method).Observe(timeNow().Sub(start).Seconds())
	})
}
