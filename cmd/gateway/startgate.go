package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startGateMax bounds how long a starting node's readiness waits for its
// NATS server's start-up work (startGate) once nothing else holds it: once
// the node can acknowledge its tenants' writes (their streams' leaders
// answer) and its replicas hold what their streams held at its first look
// and trail by no more than --max-lag (internal/readiness: before the
// first ready a replica behind is stale until then), it serves what
// running readiness asks for, and the gate only adds that its own Raft
// replicas are current with their groups. It holds that long at most, so
// that /readyz says ready within about a second of the node being able
// to, and still covers the usual start (the check passes at its second
// look, "What a rolling restart waits for", docs/CLUSTERING.md). A stream
// whose group cannot elect a leader (its majority down) is never current
// either. The bound counts from the first observation at which the gate
// alone held readiness (readiness.Verdict.OnlyStarting), not from the
// gate's first look: a node that spends longer than the bound opening its
// tenants or catching up its replicas still waits for it afterwards.
const startGateMax = time.Second

// startGate says what start-up work the embedded NATS server of a
// clustered node still does, for the readiness prober's observations
// before the node was first ready (readiness.Observation.Starting): the
// server's own health check, which fails while a stream or consumer placed
// on this node is not current with its group (recovering its files,
// catching up with the leader), as NATS's own rolling restart waits for.
// Owned by the prober's goroutine.
type startGate struct {
	// health returns what the server's health check says fails; "" when it
	// passes.
	health func() string
	log    *slog.Logger
	first  time.Time // the gate's first look
	alone  time.Time // the first observation at which the gate alone held readiness; zero: none yet
	last   string    // the last look's reason; "" none yet or none
	done   bool      // it passed, or gave up: it never holds again
}

// newStartGate returns the gate of srv, nil outside an embedded cluster
// (a single server has no one to catch up with, nor a handover).
func newStartGate(cfg Config, srv *server.Server, log *slog.Logger) *startGate {
	if cfg.Cluster == "" || srv == nil {
		return nil
	}
	return &startGate{health: func() string { return healthzFailure(srv) }, log: log}
}

// healthzFailure runs srv's own health check (the streams and consumers
// placed on it, in-process) and returns what fails, "" when it passes.
func healthzFailure(srv *server.Server) string {
	hs := srv.Healthz(&server.HealthzOptions{})
	switch {
	case hs.Error == "" && hs.StatusCode < 300:
		return ""
	case hs.Error != "":
		return hs.Error
	case hs.Status != "":
		return hs.Status
	}
	return fmt.Sprintf("health check status %d", hs.StatusCode)
}

// reason returns what start-up work is left at now, "" once none is, or
// once startGateMax has passed since the gate alone held readiness (at
// the observation that reaches it: with the prober's 500 ms, the second
// after, not the third)
// (logged: the node turns ready with that work still going on). Cost: one
// health check per look until it passes.
func (g *startGate) reason(now time.Time) string {
	if g == nil || g.done {
		return ""
	}
	if g.first.IsZero() {
		g.first = now
	}
	why := g.health()
	switch {
	case why == "":
		g.done = true
		if g.last != "" {
			g.log.Info("readiness: start-up work done", "waited", now.Sub(g.first).Round(time.Millisecond), "was", g.last)
		}
		return ""
	case !g.alone.IsZero() && now.Sub(g.alone) >= startGateMax:
		g.done = true
		g.log.Info("readiness: start-up work not done, ready all the same (writable and fresh)", "waited", now.Sub(g.first).Round(time.Millisecond),
			"alone", startGateMax, "work", why)
		return ""
	}
	g.last = why
	return why
}

// heldAlone notes that the observation at at found the gate the only thing
// holding readiness: startGateMax counts from the first such observation.
func (g *startGate) heldAlone(at time.Time) {
	if g != nil && !g.done && g.alone.IsZero() {
		g.alone = at
	}
}
