package clusterops

import "time"

// Choosing a stopping leader's successor. Raft's own choice on a step-down
// is the first peer heard within its live window in the order of a Go map:
// in a rolling restart (every node stopped and started again in turn) that
// is as often as not the node that the operator stops next, which must
// then hand the leadership on again, each handover a write gap of an
// election (the fault suite's rolling restart: three handovers in one
// restart of three nodes, where one suffices). The peer connected most
// recently is the one the rolling restart has done with: a stopping leader
// names it, among the replicas that are caught up, so that one rolling
// restart hands each stream over at most twice (once where the first node
// stopped does not lead it), whatever the order of the nodes.

// Candidate is one of a stream's other replicas as its leader sees it
// (JetStream's PeerInfo).
type Candidate struct {
	Name string
	// Lag is how many committed entries the replica has not stored yet;
	// Active how long ago the leader last heard from it.
	Lag    uint64
	Active time.Duration
	// Since is when this node's oldest route to the peer was made: the
	// peer's (re)start, or this node's own where that came later. Zero:
	// no route known.
	Since time.Time
}

// Bounds on a successor: a replica further behind, or not heard from
// for longer, is not named. A few entries of lag are writes on their way
// to the replica (a loaded stream's followers trail its commit by some):
// the step-down's transfer follows them on the same path. A replica that
// missed entries must catch up first, and the transfer would find it
// unable to win its vote: the stream then waits for an election timeout.
const (
	MaxSuccessorLag    = 16
	MaxSuccessorSilent = 2 * time.Second
)

// Successor returns the candidate to hand a stream's leadership to: of
// those caught up (within MaxSuccessorLag and MaxSuccessorSilent) and
// routed, the one connected most recently; "" where none is (Raft's
// choice then: a cluster stopping whole has no one caught up to hand to).
// Ties go to the first. Pure.
func Successor(cs []Candidate) string {
	best := -1
	for i, c := range cs {
		if c.Lag > MaxSuccessorLag || c.Active > MaxSuccessorSilent || c.Since.IsZero() {
			continue
		}
		if best < 0 || c.Since.After(cs[best].Since) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return cs[best].Name
}
