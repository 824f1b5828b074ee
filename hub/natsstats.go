package hub

import (
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// PublishBuckets are the upper bounds, in seconds, of the publish latency
// histogram in NATSStats: from a quick ack to the whole default
// WriteTimeout.
var PublishBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// natsStats counts what the Hub's NATS connection and its publishes went
// through, for metrics. Lock-free: every field is atomic.
type natsStats struct {
	disconnects    atomic.Uint64
	reconnects     atomic.Uint64
	publishes      atomic.Uint64     // publish calls (each with its retries), failed or not
	publishErrors  atomic.Uint64     // publish calls that failed after their retries
	retries        atomic.Uint64     // attempts after a call's first
	consumerResets atomic.Uint64     // replicas' consumers replaced after a failure or stall (follow.go)
	applyTimeouts  atomic.Uint64     // stored writes answered 503: not applied here within WriteTimeout
	leaderChanges  atomic.Uint64     // tenant streams' leader elections announced (leader.go)
	quorumLost     atomic.Uint64     // tenant streams' quorum losses announced
	latencyNanos   atomic.Uint64     // sum over publish calls, their retries included
	buckets        [16]atomic.Uint64 // calls per PublishBuckets bound (non-cumulative); the last: above all
}

// observePublish records one publish call that took d and ended with err.
func (s *natsStats) observePublish(d time.Duration, err error) {
	s.publishes.Add(1)
	if err != nil {
		s.publishErrors.Add(1)
	}
	s.latencyNanos.Add(uint64(d))
	i := 0
	for i < len(PublishBuckets) && d.Seconds() > PublishBuckets[i] {
		i++
	}
	s.buckets[i].Add(1)
}

// NATSStats is a snapshot of the Hub's NATS connection and publishes.
type NATSStats struct {
	Connected     bool
	Disconnects   uint64 // times the connection was lost
	Reconnects    uint64 // times it came back
	Publishes     uint64 // publish calls, each counted once however many attempts it made
	PublishErrors uint64 // publish calls that failed (the write answered 503)
	Retries       uint64 // attempts beyond each call's first
	// ConsumerResets counts replicas' stream consumers replaced because
	// they failed or stalled (a server died, a leader changed).
	ConsumerResets uint64
	// ApplyTimeouts counts writes JetStream stored that answered 503
	// because this node did not apply them within the write timeout.
	ApplyTimeouts uint64
	// LeaderChanges and QuorumLost count the leader elections and quorum
	// losses JetStream announced for tenant streams (clusters only).
	LeaderChanges, QuorumLost uint64
	LatencySum                time.Duration
	// LatencyCounts[i] is the number of publish calls that took at most
	// PublishBuckets[i] seconds (cumulative, as Prometheus histograms).
	LatencyCounts []uint64
}

// NATS returns the connection's state and the publish counters. Cost:
// O(buckets), atomic loads only. Safe for concurrent use.
func (h *Hub) NATS() NATSStats {
	s := &h.nstats
	out := NATSStats{
		Connected: h.Connected(), Disconnects: s.disconnects.Load(), Reconnects: s.reconnects.Load(),
		Publishes: s.publishes.Load(), PublishErrors: s.publishErrors.Load(), Retries: s.retries.Load(),
		ConsumerResets: s.consumerResets.Load(), ApplyTimeouts: s.applyTimeouts.Load(),
		LeaderChanges: s.leaderChanges.Load(), QuorumLost: s.quorumLost.Load(),
		LatencySum: time.Duration(s.latencyNanos.Load()), LatencyCounts: make([]uint64, len(PublishBuckets)),
	}
	var acc uint64
	for i := range PublishBuckets {
		acc += s.buckets[i].Load()
		out.LatencyCounts[i] = acc
	}
	return out
}

// reconnectWait is the pause between two reconnect attempts to NATS.
const reconnectWait = 250 * time.Millisecond

// connHandlers are the connection options that count and log each
// disconnect and reconnect of the Hub's NATS connection (one line each),
// and reconnect soon.
func (h *Hub) connHandlers() []nats.Option {
	return []nats.Option{
		// nats.go waits 2 s between reconnects by default: most of a
		// failover's write gap. Writes are retried meanwhile (publish.go).
		nats.ReconnectWait(reconnectWait), nats.ReconnectJitter(reconnectWait/2, reconnectWait/2),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if h.ctx.Err() != nil {
				return // Close drains the connection: not an outage
			}
			h.nstats.disconnects.Add(1)
			h.log.Warn("hub: NATS disconnected: writes wait for it, reads go on from the replicas", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			h.nstats.reconnects.Add(1)
			h.log.Info("hub: NATS reconnected", "server", nc.ConnectedUrlRedacted())
		}),
	}
}
