package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/internal/clusterops"
)

// handoffTimeout bounds a stopping node's wait for its streams' new
// leaders: a stop of the whole cluster, where no replica can take over,
// costs at most this before the HTTP drain. A handover takes 40–200 ms
// on a loaded 2-core machine (TestPlannedLeaderStop).
const handoffTimeout = time.Second

// drainHandler is the API server's handler around the handoff: once
// draining, every answer but a WebSocket upgrade carries "Connection:
// close", so that a keep-alive client opens its next request elsewhere
// rather than meeting a closed connection (an EOF) when Shutdown closes
// the idle ones.
type drainHandler struct {
	next     http.Handler
	draining atomic.Bool
}

func (d *drainHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.draining.Load() && r.Header.Get("Upgrade") == "" {
		w.Header().Set("Connection", "close")
	}
	d.next.ServeHTTP(w, r)
}

// handOver hands the meta group's leadership (where this node has it)
// and then the stream leaderships of this node to the other peers and
// replicas, and waits, at most handoffTimeout in all, for their new
// leaders; meanwhile it deletes the consumers it hosts on the streams it
// only follows, so that their readers (other nodes' replicas) move at
// once. A node outside an embedded cluster has none to hand over.
// Requests are served meanwhile (with Connection: close): a write that
// reaches a stream during the handover waits for the new leader in the
// hub. The meta leader goes first: the streams' handovers delete this
// node's consumers, and their readers create new ones, both through the
// meta leader.
//
// It returns a function that the drain calls once the HTTP server has shut
// down: until then the node keeps deleting the consumers placed on it
// (clusterops.KeepDropping).
func (g *gateway) handOver() (drained func()) {
	if g.cfg.Cluster == "" || g.hub == nil || g.system == nil {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), handoffTimeout)
	defer cancel()
	start := time.Now()
	local := g.system.local(g.cfg.Node) // before the meta step-down: read in-process, asking no meta leader
	g.handOverMeta(ctx)
	var released []clusterops.Handoff
	var wg sync.WaitGroup
	wg.Go(func() { released = clusterops.Release(ctx, g.hub.JetStream(), g.cfg.Node, local) })
	handoffs := clusterops.StepDownLocal(ctx, g.hub.JetStream(), g.cfg.Node, local)
	wg.Wait()
	g.logReleased(released)
	for _, h := range handoffs {
		if h.Err != nil {
			g.log.Warn("stream leadership not handed over", "stream", h.Stream, "err", h.Err)
			continue
		}
		if h.DropErr != nil {
			g.log.Warn("stream's consumers on this node not all deleted: their readers move once they miss its heartbeats", "stream", h.Stream, "err", h.DropErr)
		}
		g.log.Info("stream leadership handed over", "stream", h.Stream, "leader", h.Leader, "named", h.To, "consumers_moved", h.Dropped, "took", h.Took.Round(time.Millisecond))
	}
	g.log.Info("leaderships handed over", "streams", len(handoffs), "took", time.Since(start).Round(time.Millisecond))
	kctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- clusterops.KeepDropping(kctx, g.hub.JetStream(), local) }()
	return func() {
		stop()
		if n := <-done; n > 0 {
			g.log.Info("consumers placed here during the drain deleted", "consumers_moved", n)
		}
	}
}

// logReleased logs the consumers deleted on the streams this node
// follows (clusterops.Release); a stream that hosted none is not named.
func (g *gateway) logReleased(released []clusterops.Handoff) {
	for _, h := range released {
		if h.Dropped > 0 {
			g.log.Info("stream's consumers on this node deleted", "stream", h.Stream, "consumers_moved", h.Dropped, "took", h.Took.Round(time.Millisecond))
		}
		if h.DropErr != nil {
			g.log.Warn("stream's consumers on this node not all deleted: their readers move once they miss its heartbeats", "stream", h.Stream, "err", h.DropErr)
		}
	}
}

// handOverMeta steps the meta group's leader down where this node is it,
// naming its successor as a stream's (cluster_successor.go).
func (g *gateway) handOverMeta(ctx context.Context) {
	var to string
	if g.system.metaLeader() == g.cfg.Node {
		to = g.system.metaSuccessor()
	}
	m := clusterops.StepDownMetaTo(ctx, g.system.nc, g.cfg.Node, to, g.system.metaLeader)
	switch {
	case !m.Led:
		g.log.Info("not the meta leader: nothing to hand over", "meta_leader", g.system.metaLeader())
	case m.Err != nil:
		g.log.Warn("meta leadership not handed over", "err", m.Err, "took", m.Took.Round(time.Millisecond))
	default:
		g.log.Info("meta leadership handed over", "leader", m.Leader, "named", to, "took", m.Took.Round(time.Millisecond))
	}
}
