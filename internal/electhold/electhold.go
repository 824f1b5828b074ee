// Package electhold keeps this node's replicas of chosen Raft groups of
// the embedded nats-server from starting elections, and lets them again:
// a Raft observer, in nats-server's terms, still follows its leader,
// replicates and votes, but does not campaign when its election timer
// runs out (the timer is set again when it stops observing).
//
// Why (docs/CLUSTERING.md, "A non-transitive partition"): a follower cut
// from its group's leader, which the other follower still hears, starts
// an election after its Raft timeout (1-1.5 s); nats-server's Raft has no
// pre-vote, so its vote request, of a higher term, makes the other
// follower drop the leader, and the group has no leader until the next
// timeout, while the cut follower, its log behind, cannot win. The
// gateway holds such a follower's groups back (cmd/gateway, peers.go,
// from internal/reach's Relayed) until the leader is heard again or the
// leadership has moved to a peer it hears.
//
// nats-server offers no API to a server's Raft node of a group: its
// lookup is reached through go:linkname, as natsconf's Raft timings are;
// the link fails at build time if an upgrade renames it, and the package's
// test checks that a stream's group is found and held.
//
// What clears a hold: Set without the group (its owner calls Set at every
// beat while it holds any); the group's Raft node stopping (a stream
// deleted or reset, the server shut down: the observer flag lives in the
// node's memory only, so a restarted server or a re-created node elects
// as usual, unless Set, still asked for the group, holds the new node).
// A Holder is not released at its owner's stop: the server's Raft nodes
// stop with the process right after.
//
// The observer flag is one bool that nats-server sets for reasons of its
// own too (lame duck mode, which the gateway does not enter; a stream's
// or the meta group's critical write error), and SetObserver also resets
// the node's leaf-node extension state (none in an embedded cluster,
// which has no leaf nodes). A group nats-server made an observer before
// Set would hold it is left alone; one it makes an observer while this
// Holder holds it cannot be told apart, and is released with the rest.
//
// Not safe for concurrent use: one goroutine owns a Holder.
package electhold

import (
	"slices"
	_ "unsafe" // go:linkname: the embedded server's Raft node of a group

	"github.com/nats-io/nats-server/v2/server"
)

//go:linkname lookupRaftNode github.com/nats-io/nats-server/v2/server.(*Server).lookupRaftNode
func lookupRaftNode(s *server.Server, group string) server.RaftNode

// MetaGroup is the JetStream meta group's Raft group name.
const MetaGroup = "_meta_"

// Holder holds groups of one server back from elections and remembers
// which it holds, and the Raft node it made an observer, so that it
// releases only those: a group that was an observer already when Set
// would hold it (nats-server's lame duck mode, a critical write error) is
// left so, and a node nats-server started anew under a held group's name
// (a replica removed and placed again, a stream's reset) is not taken for
// the one held.
type Holder struct {
	srv  *server.Server
	held map[string]server.RaftNode // group → the node this Holder made an observer
}

// New returns srv's Holder, holding nothing.
func New(srv *server.Server) *Holder { return &Holder{srv: srv, held: map[string]server.RaftNode{}} }

// Held returns the groups held, sorted.
func (h *Holder) Held() []string {
	out := make([]string, 0, len(h.held))
	for g := range h.held {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// Set holds exactly the groups of want that run on this server and lets
// every other group it held elect again; it returns the groups it newly
// held and those it released. A group already an observer for another
// reason is not taken over; one that no longer runs here is forgotten,
// and one whose node nats-server replaced is forgotten and, where still
// wanted, its new node held (reported held again).
// O(len(want) × groups held).
func (h *Holder) Set(want []string) (held, released []string) {
	for g, was := range h.held {
		n := lookupRaftNode(h.srv, g)
		if n == was && slices.Contains(want, g) {
			continue
		}
		delete(h.held, g)
		if n == was && n.IsObserver() { // not nil: was is not
			n.SetObserver(false) // its election timer starts again
			released = append(released, g)
		}
	}
	for _, g := range want {
		if h.held[g] != nil {
			continue
		}
		n := lookupRaftNode(h.srv, g)
		if n == nil || n.IsObserver() || n.Leader() {
			continue
		}
		n.SetObserver(true)
		h.held[g] = n
		held = append(held, g)
	}
	slices.Sort(held)
	slices.Sort(released)
	return held, released
}
