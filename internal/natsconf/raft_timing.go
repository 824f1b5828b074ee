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
// heartbeats every 250 ms and elections after 1 to 2 s of silence, the
// same 4:1 ratio of election timeout to heartbeat as the defaults, so a
// busy node that misses three heartbeats in a row still keeps its
// leaders. The cost: four times the idle heartbeat traffic per Raft
// group (a few hundred bytes a second per stream).
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
	raftElectionMax = 2 * time.Second
)

// init sets the Raft timings. In init, not at the first clustered Start:
// nats-server reads them from its Raft goroutines without a lock, so they
// are written before any such goroutine exists.
func init() {
	natsHBInterval = raftHeartbeat
	natsMinElectionTimeout = raftElectionMin
	natsMaxElectionTimeout = raftElectionMax
}
