package hub

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rankwire/rankwire/internal/natsstats"
)

// NATSStats is a snapshot of the Hub's NATS connection and publishes.
type NATSStats = natsstats.Stats

// PublishBuckets are the upper bounds, in seconds, of the publish latency
// histogram in NATSStats.
var PublishBuckets = natsstats.PublishBuckets

// NATS returns the connection's state and the publish counters. Cost:
// O(buckets), atomic loads only. Safe for concurrent use.
func (h *Hub) NATS() NATSStats { return h.nstats.Snapshot(h.Connected()) }

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
			h.nstats.Disconnects.Add(1)
			h.log.Warn("hub: NATS disconnected: writes wait for it, reads go on from the replicas", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			h.nstats.Reconnects.Add(1)
			h.log.Info("hub: NATS reconnected", "server", nc.ConnectedUrlRedacted())
		}),
	}
}
