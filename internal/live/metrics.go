package live

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// metrics are the WebSocket side's Prometheus series. The engine's gauges
// are read at scrape time.
type metrics struct {
	conns      prometheus.Gauge
	messages   prometheus.Counter
	writes     prometheus.Counter // the writer pool's socket writes: messages ÷ writes is its packing
	bytes      prometheus.Counter
	tick       prometheus.Histogram
	slowCloses prometheus.Counter
	closes     *prometheus.CounterVec // by code
	// resumeGaveUp counts resumes from the future whose bound passed
	// before this gateway applied their since (resume.go).
	resumeGaveUp prometheus.Counter
}

// closed counts a close the server sent, by code. O(1).
func (m *metrics) closed(code wire.CloseCode) {
	m.closes.WithLabelValues(code.String()).Inc()
}

func newMetrics(reg *prometheus.Registry, eng *subscriptions.Engine) *metrics {
	m := &metrics{
		conns:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "rankwire_ws_connections", Help: "Open WebSocket connections."}),
		messages: prometheus.NewCounter(prometheus.CounterOpts{Name: "rankwire_ws_messages_sent_total", Help: "WebSocket messages written."}),
		bytes:    prometheus.NewCounter(prometheus.CounterOpts{Name: "rankwire_ws_bytes_sent_total", Help: "Bytes of WebSocket messages written."}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{Name: "rankwire_ws_writes_total",
			Help: "Socket writes of live messages: one per connection per writer's turn, carrying every message the turn took (messages sent ÷ writes is how many a write packs)."}),
		slowCloses: prometheus.NewCounter(prometheus.CounterOpts{Name: "rankwire_ws_slow_closes_total", Help: "Connections closed (4008) because bytes their socket did not take waited unsent past the slow timeout."}),
		resumeGaveUp: prometheus.NewCounter(prometheus.CounterOpts{Name: "rankwire_ws_resumes_behind_total",
			Help: "Subscriptions resumed with a since this gateway had not applied within the resume wait, answered unavailable so that the client moves."}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rankwire_ws_closes_total", Help: "WebSocket connections the gateway closed, by close code (PROTOCOL.md's table; 1009 and 1007 included).",
		}, []string{"code"}),
		tick: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "rankwire_ws_push_tick_seconds", Help: "Duration of a push tick: recomputing, encoding and offering every changed view.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25},
		}),
	}
	for _, code := range wire.CloseCodes {
		m.closes.WithLabelValues(code.String()) // every code's series exists from the start, at 0
	}
	reg.MustRegister(m.conns, m.messages, m.writes, m.bytes, m.slowCloses, m.closes, m.tick, m.resumeGaveUp)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rankwire_ws_resumes_held", Help: "Subscriptions resumed with a since this gateway has not applied yet, waiting for it.",
	}, func() float64 { return float64(eng.Stats().Held) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rankwire_ws_views", Help: "Distinct live views (board, window, kind, parameters).",
	}, func() float64 { return float64(eng.Stats().Views) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "rankwire_ws_coalesced_total", Help: "Pending view states replaced by newer ones before a slow client read them.",
	}, func() float64 { return float64(eng.Stats().Coalesced) }))
	for _, k := range subscriptions.Kinds {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rankwire_ws_subscriptions", Help: "Live subscriptions by view kind.",
			ConstLabels: prometheus.Labels{"kind": k.String()},
		}, func() float64 { return float64(eng.Stats().Subscriptions[k]) }))
	}
	return m
}
