package natsconf

import (
	"time"
	_ "unsafe" // go:linkname: the embedded server's Raft timings

	_ "github.com/nats-io/nats-server/v2/server" // the package the names below live in
)

// Failure detection of the embedded cluster. JetStream replicates each
// stream with Raft; a follower starts an election only when it has heard
// nothing from the leader for a random 4 to 9 s (nats-server's defaults,
// with a heartbeat a second). After a kill -9 of the node leading a
// stream, that wait is the whole floor of the write gap: measured with
// the defaults, 5.6 s in one run of six (the others killed a follower and
// saw no gap). nats-server exposes no option for these timings, so this
// package sets them at init, before any server of the process starts
// (a lone embedded server and an external one run no Raft: only the
// embedded cluster is affected):
// heartbeats every 250 ms and elections after 1 to 1.5 s of silence, the
// same 4:1 ratio of the shortest election timeout to the heartbeat as the
// defaults, so a busy node that misses three heartbeats in a row still
// keeps its leaders. The cost: four times the idle heartbeat traffic per
// Raft group (a few hundred bytes a second per stream).
//
// Why 1.5 s and not 2 s at the most (docs/CLUSTERING.md, "The departed
// peer's long election"): after a leader's kill -9 the two survivors'
// timers, started at the same last append, run out at random within the
// window; where they run out within a vote's one-way latency of each
// other (1-10 ms, so about 2 × latency / window of elections), both are
// candidates of one term, each votes for itself, and the stream waits a
// second timeout, a fresh random one, before the next round: with a 1-2 s
// window, 2-4 s in all (3.59 s seen once in 68 runs of the fault suite),
// past the 3 s the fault suite allows a write gap; with 1-1.5 s, at most
// 3 s plus the vote's round trip (TestSplitVoteTail simulates the tail). The narrower window makes such a split vote twice as likely, and
// every election 0.25 s shorter on average; it does not move the
// shortest timeout, which is what decides whether a busy follower
// campaigns against a live leader.
//
// These are package variables of nats-server, set through go:linkname
// because no API reaches them. The link fails at build time if an upgrade
// renames one, and TestRaftTimingsApplied checks the values took. An
// external NATS cluster (--nats) keeps its own timings: its operator
// tunes nats-server. The package's init sets them, so every
// program that imports it (package hub does) has them.

//go:linkname natsMinElectionTimeout github.com/nats-io/nats-server/v2/server.minElectionTimeout
var natsMinElectionTimeout time.Duration

//go:linkname natsMaxElectionTimeout github.com/nats-io/nats-server/v2/server.maxElectionTimeout
var natsMaxElectionTimeout time.Duration

//go:linkname natsHBInterval github.com/nats-io/nats-server/v2/server.hbInterval
var natsHBInterval time.Duration

// The embedded cluster's Raft timings; see the file comment.
const (
	raftHeartbeat   = 250 * time.Millisecond
	raftElectionMin = time.Second
	raftElectionMax = 1500 * time.Millisecond
)

// init sets the Raft timings. In init, not at the first clustered Start:
// nats-server reads them from its Raft goroutines without a lock, so they
// are written before any such goroutine exists.
func init() {
	natsHBInterval = raftHeartbeat
	natsMinElectionTimeout = raftElectionMin
	natsMaxElectionTimeout = raftElectionMax
}
