package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/catchup"
)

// newGate returns the Server's catch-up gate (internal/catchup), shared
// with its live plane, and registers its metrics in reg.
func newGate(reg *prometheus.Registry, h *hub.Hub, wait time.Duration) *catchup.Gate {
	g := catchup.New(h, wait)
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_reads_catching_up",
			Help: "Reads, subscriptions and board writes that found nothing and wait, bounded, for this node's replica to apply what the tenant's stream held when they asked."},
			func() float64 { return float64(g.Stats().Waiting) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_reads_behind_total",
			Help: "Reads, subscriptions and board writes answered unavailable because this node's replica did not catch up with the tenant's stream in time (a not found it could not vouch for)."},
			func() float64 { return float64(g.Stats().Behind) }))
	return g
}

// read decides a request's error err: a GET that found nothing (a board,
// member, identity or profile: hub.ErrNotFound) says so only once this
// node has applied all its tenant's stream held when it asked; again
// reads once more after a catch-up. A GET handler writes nothing before it
// succeeds, so calling it again is safe. Any other error, or method, is as
// it was.
func (s *Server) read(r *http.Request, err error, again func() error) error {
	tenant := scopeOf(r).Tenant
	if r.Method != http.MethodGet || tenant == "" || !errors.Is(err, hub.ErrNotFound) {
		return err
	}
	return s.fresh.Retry(r.Context(), tenant, err, again)
}
