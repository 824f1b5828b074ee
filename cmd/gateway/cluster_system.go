package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/clusterops"
	"github.com/rankwire/rankwire/internal/natsconf"
)

// clusterSystem is this node's connection to its embedded server's system
// account, for what only that account may ask of the JetStream cluster:
// the meta leader's step-down (cluster_handoff.go) and removing a departed
// peer (cluster_peers.go). In-process only: its user's password is made
// at start, kept in memory, and nats-server refuses that user on every
// listener (internal/natsconf, system.go). Tenants' tokens reach the API
// only, never NATS.
type clusterSystem struct {
	srv *server.Server
	nc  *nats.Conn
	own string // the prefix of this node's own replicas' consumers
}

// newReplicaID returns a random id for the hub's replicas' consumers
// (hub.Config.ReplicaID): 8 bytes in hex, as the hub's own.
func newReplicaID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24)
	return hex.EncodeToString(b[:])
}

// newSystemPassword gives c the system user's password for this process.
func newSystemPassword(c *hub.Cluster) error {
	if c.Name == "" {
		return nil
	}
	pass, err := natsconf.NewSystemPassword()
	c.System = pass
	return err
}

// openClusterSystem connects to srv, in-process, as the system user of c;
// replicaID is the hub's (hub.Config.ReplicaID).
func openClusterSystem(srv *server.Server, c hub.Cluster, replicaID string) (*clusterSystem, error) {
	nc, err := nats.Connect("", nats.InProcessServer(srv), natsconf.SystemAuth(c), nats.Name("rankwire-system"),
		nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("the system account's in-process connection: %w", err)
	}
	return &clusterSystem{srv: srv, nc: nc, own: "rw_" + replicaID + "_"}, nil
}

// metaLeader is the JetStream meta group's leader as this node sees it,
// "" where it knows none.
func (cs *clusterSystem) metaLeader() string {
	info, err := cs.srv.Jsz(nil)
	if err != nil || info.Meta == nil {
		return ""
	}
	return info.Meta.Leader
}

// local is what this node's server holds, read in-process (no request to
// the meta leader, which may be stepping down meanwhile).
func (cs *clusterSystem) local(self string) clusterops.Local {
	led, followed := cs.replicated(self)
	return clusterops.Local{Led: led, Followed: followed, Consumers: func(stream string) []string { return cs.hostedConsumers(self, stream) },
		Successor: cs.successor}
}

// replicated names the replicated streams self leads and those it holds
// a replica of under another leader (or none, during an election).
func (cs *clusterSystem) replicated(self string) (led, followed []string) {
	for _, s := range cs.streams(false) {
		switch c := s.Cluster; {
		case c == nil || len(c.Replicas) == 0:
		case c.Leader == self:
			led = append(led, s.Name)
		default:
			followed = append(followed, s.Name)
		}
	}
	return led, followed
}

// hostedConsumers names the single-replica consumers of stream on self
// but this node's own replicas' (their reader stops with it: deleted, it
// would only make another, maybe here again, while it still serves).
func (cs *clusterSystem) hostedConsumers(self, stream string) []string {
	var names []string
	for _, s := range cs.streams(true) {
		if s.Name != stream {
			continue
		}
		for _, c := range s.Consumer {
			if c != nil && c.Cluster != nil && c.Cluster.Leader == self && len(c.Cluster.Replicas) == 0 && !strings.HasPrefix(c.Name, cs.own) {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// streams lists the streams this node's server holds a replica of, in
// every account, with their consumers on it where consumers is set. Read
// now, not through streamView: the handover needs the consumers (the view
// has none) and the streams led now, not a beat ago.
func (cs *clusterSystem) streams(consumers bool) []server.StreamDetail {
	info, err := cs.srv.Jsz(&server.JSzOptions{Accounts: true, Streams: true, Consumer: consumers})
	if err != nil {
		return nil
	}
	var out []server.StreamDetail
	for _, a := range info.AccountDetails {
		out = append(out, a.Streams...)
	}
	return out
}

// close closes the connection.
func (cs *clusterSystem) close() { cs.nc.Close() }
