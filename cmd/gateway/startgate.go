package main

import (
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startGateMax bounds how long a starting node's readiness waits for its
// NATS server's start-up work (startGate): a stream placed on this node
// whose group cannot elect a leader (its majority down) is never current,
// and the node must still turn ready for what it can serve.
const startGateMax = 20 * time.Second

// startGate says what start-up work the embedded NATS server of a
// clustered node still does, for the readiness prober's observations
// before the node was first ready (readiness.Observation.Starting): the
// server's own health check, which fails while a stream or consumer placed
// on this node is not current with its group (recovering its files,
// catching up with the leader), as NATS's own rolling restart waits for.
// Owned by the prober's goroutine.
type startGate struct {
	srv   *server.Server
	log   *slog.Logger
	start time.Time // the gate's first look
	last  string    // the last look's reason; "" none yet or none
	done  bool      // it passed, or gave up: it never holds again
}

// newStartGate returns the gate of srv, nil outside an embedded cluster
// (a single server has no one to catch up with, nor a handover).
func newStartGate(cfg Config, srv *server.Server, log *slog.Logger) *startGate {
	if cfg.Cluster == "" || srv == nil {
		return nil
	}
	return &startGate{srv: srv, log: log}
}

// reason returns what start-up work is left at now, "" once none is, or
// once startGateMax has passed since the first look (logged: the node
// turns ready with that work still going on). Cost: one health check of
// the streams and consumers placed on this node, in-process, per look
// until it passes.
func (g *startGate) reason(now time.Time) string {
	if g == nil || g.done {
		return ""
	}
	if g.start.IsZero() {
		g.start = now
	}
	hs := g.srv.Healthz(&server.HealthzOptions{})
	switch {
	case hs.Error == "" && hs.StatusCode < 300:
		g.done = true
		if g.last != "" {
			g.log.Info("readiness: start-up work done", "waited", now.Sub(g.start).Round(time.Millisecond), "was", g.last)
		}
		return ""
	case now.Sub(g.start) > startGateMax:
		g.done = true
		g.log.Warn("readiness: start-up work not done, ready all the same", "waited", startGateMax, "work", hs.Error)
		return ""
	}
	g.last = hs.Error
	if g.last == "" {
		g.last = hs.Status
	}
	return g.last
}
