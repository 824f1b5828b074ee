package loadtest

import (
	"strings"
	"sync"
	"sync/atomic"
)

// statShards is how many ways wsStats splits the counters every message
// writes. Connection i counts into shard i mod statShards, so that two
// connections handling messages at once on different cores write the
// same cache line 1 time in 16 rather than every time.
const statShards = 16

// wsStats are one worker's counters, shared by its connections. Safe for
// concurrent use.
type wsStats struct {
	connected                    atomic.Int64 // subscriptions on open connections
	connections                  atomic.Int64 // open connections
	gaps, reconnects, dialErrors atomic.Int64
	failed                       atomic.Int64 // subscriptions whose connection gave up
	viewed                       atomic.Int64 // subscriptions that received their first snapshot
	shards                       [statShards]statShard

	// The stalled connections (fanout_stalled.go): opened, never opened,
	// and at the end found closed by the server or still open.
	stalled, stalledFailed, stalledClosed, stalledOpen atomic.Int64

	// The burst floor's connections (burst.go) and their latencies: one
	// frame each per burst, so one histogram unsharded.
	burstConns atomic.Int64
	burst      *Hist

	mu     sync.Mutex // guards the maps below
	errors map[string]int64
	closes map[string]int64
	// byNode counts errors as errors does, by the gateway that sent them
	// or refused the dial: "<host:port> <error>".
	byNode map[string]int64
}

// statShard is a share of the per-message counters, on cache lines of its
// own (128 bytes: adjacent-line prefetch pairs 64-byte lines).
type statShard struct {
	messages, bytes atomic.Int64
	wire            atomic.Int64            // whole frames with their headers (wsConn.framed)
	deltas          atomic.Int64            // of the messages, Centrifugo publications that were fossil deltas
	deltaBytes      atomic.Int64            // their bytes
	heartbeats      atomic.Int64            // of the messages, the gateway's heartbeats
	heartbeatBytes  atomic.Int64            // their bytes
	heartbeatWire   atomic.Int64            // their frames, with the headers
	hists           [afterAckHist + 1]*Hist // latency by viewKinds index, then after the acknowledgement
	_               [128 - 64 - (afterAckHist+1)*8]byte
}

func newWSStats() *wsStats {
	s := &wsStats{errors: map[string]int64{}, closes: map[string]int64{}, byNode: map[string]int64{}, burst: newHist()}
	for i := range s.shards {
		for k := range s.shards[i].hists {
			s.shards[i].hists[k] = newHist()
		}
	}
	return s
}

func (s *wsStats) count(m map[string]int64, key string) {
	s.mu.Lock()
	m[key]++
	s.mu.Unlock()
}

// nodeError counts error key in errors and, under node (a gateway's base
// URL), in byNode: so that a run's report says which gateway answered it.
func (s *wsStats) nodeError(node, key string) {
	node = strings.TrimPrefix(strings.TrimPrefix(node, "http://"), "https://")
	s.mu.Lock()
	s.errors[key]++
	s.byNode[node+" "+key]++
	s.mu.Unlock()
}

// wireBytes is the frames' bytes with their headers counted so far, and
// of the messages the Centrifugo deltas and their bytes. O(statShards).
func (s *wsStats) wireBytes() (n, deltas, deltaBytes int64) {
	return s.sum(shardWire), s.sum(shardDeltas), s.sum(shardDeltaBytes)
}

// heartbeatTotals is, of the messages counted so far, the gateway's
// heartbeats, their bytes and their frames' bytes. O(statShards).
func (s *wsStats) heartbeatTotals() (n, bytes, wire int64) {
	return s.sum(shardHeartbeats), s.sum(shardHeartbeatBytes), s.sum(shardHeartbeatWire)
}

// totals returns the messages and bytes counted so far. O(statShards).
func (s *wsStats) totals() (messages, bytes int64) {
	return s.sum(shardMessages), s.sum(shardBytes)
}

// sum adds up one counter of every shard, the one field picks: the only
// loop over the shards' counters, whichever totals ask. O(statShards).
func (s *wsStats) sum(field func(*statShard) *atomic.Int64) (n int64) {
	for i := range s.shards {
		n += field(&s.shards[i]).Load()
	}
	return n
}

// The shards' counters, for sum.
func shardMessages(sh *statShard) *atomic.Int64       { return &sh.messages }
func shardBytes(sh *statShard) *atomic.Int64          { return &sh.bytes }
func shardWire(sh *statShard) *atomic.Int64           { return &sh.wire }
func shardDeltas(sh *statShard) *atomic.Int64         { return &sh.deltas }
func shardDeltaBytes(sh *statShard) *atomic.Int64     { return &sh.deltaBytes }
func shardHeartbeats(sh *statShard) *atomic.Int64     { return &sh.heartbeats }
func shardHeartbeatBytes(sh *statShard) *atomic.Int64 { return &sh.heartbeatBytes }
func shardHeartbeatWire(sh *statShard) *atomic.Int64  { return &sh.heartbeatWire }

// afterAckHist is the index of the latency after the acknowledgement
// (fanout_ack.go) in a shard's and a worker report's histograms, after the
// view kinds'.
const afterAckHist = 4

// hists returns the latency histogram of each view kind, then the one
// after the acknowledgement, summed over the shards. O(statShards ×
// histBuckets); safe concurrently with Add, though samples added meanwhile
// may or may not be included.
func (s *wsStats) hists() []histWire {
	out := make([]histWire, afterAckHist+1)
	for k := range out {
		sum := newHist()
		for i := range s.shards {
			sum.merge(s.shards[i].hists[k].wire())
		}
		out[k] = sum.wire()
	}
	return out
}
