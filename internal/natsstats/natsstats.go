// Package natsstats counts what a NATS connection and its publishes went
// through, for metrics: disconnects and reconnects, publish calls with
// their retries, failures and latency histogram, consumers replaced,
// writes not applied in time, and the leader changes and quorum losses
// JetStream announced. Lock-free: every counter is atomic, and a Snapshot
// costs O(buckets) loads.
//
// It imports the standard library only.
package natsstats

import (
	"sync/atomic"
	"time"
)

// PublishBuckets are the upper bounds, in seconds, of the publish latency
// histogram in Stats: from a quick ack to the hub's whole default write
// timeout.
var PublishBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Counters counts what a NATS connection and its publishes went through.
// The zero value is ready; safe for concurrent use. The owner adds to the
// exported counters where the event happens, and records publish calls
// with ObservePublish.
type Counters struct {
	Disconnects    atomic.Uint64
	Reconnects     atomic.Uint64
	Retries        atomic.Uint64 // publish attempts after a call's first
	ConsumerResets atomic.Uint64 // replicas' consumers replaced after a failure or stall (hub's follow.go)
	ApplyTimeouts  atomic.Uint64 // stored writes answered 503: not applied here within the write timeout
	LeaderChanges  atomic.Uint64 // tenant streams' leader elections announced (hub's leader.go)
	QuorumLost     atomic.Uint64 // tenant streams' quorum losses announced
	// RaftCompactFailures counts streams whose Raft log compaction after an
	// erasure gave up (internal/raftcompact counts into it).
	RaftCompactFailures atomic.Uint64

	publishes     atomic.Uint64     // publish calls (each with its retries), failed or not
	publishErrors atomic.Uint64     // publish calls that failed after their retries
	latencyNanos  atomic.Uint64     // sum over publish calls, their retries included
	buckets       [16]atomic.Uint64 // calls per PublishBuckets bound (non-cumulative); the last: above all
}

// ObservePublish records one publish call (its retries included) that
// took d and ended with err.
func (s *Counters) ObservePublish(d time.Duration, err error) {
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

// Stats is a snapshot of a NATS connection and its publishes.
type Stats struct {
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
	// RaftCompactFailures counts streams whose Raft log, holding erased
	// data, could not be compacted within raftcompact.Budget.
	RaftCompactFailures uint64
	LatencySum          time.Duration
	// LatencyCounts[i] is the number of publish calls that took at most
	// PublishBuckets[i] seconds (cumulative, as Prometheus histograms).
	LatencyCounts []uint64
}

// Snapshot returns the counters, with connected as the connection's
// state. Cost: O(buckets), atomic loads only.
func (s *Counters) Snapshot(connected bool) Stats {
	out := Stats{
		Connected: connected, Disconnects: s.Disconnects.Load(), Reconnects: s.Reconnects.Load(),
		Publishes: s.publishes.Load(), PublishErrors: s.publishErrors.Load(), Retries: s.Retries.Load(),
		ConsumerResets: s.ConsumerResets.Load(), ApplyTimeouts: s.ApplyTimeouts.Load(),
		LeaderChanges: s.LeaderChanges.Load(), QuorumLost: s.QuorumLost.Load(), RaftCompactFailures: s.RaftCompactFailures.Load(),
		LatencySum: time.Duration(s.latencyNanos.Load()), LatencyCounts: make([]uint64, len(PublishBuckets)),
	}
	var acc uint64
	for i := range PublishBuckets {
		acc += s.buckets[i].Load()
		out.LatencyCounts[i] = acc
	}
	return out
}
