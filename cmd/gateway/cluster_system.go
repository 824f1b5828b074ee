package main

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rankwire/rankwire/hub"
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

// openClusterSystem connects to srv, in-process, as the system user of c.
func openClusterSystem(srv *server.Server, c hub.Cluster) (*clusterSystem, error) {
	nc, err := nats.Connect("", nats.InProcessServer(srv), natsconf.SystemAuth(c), nats.Name("rankwire-system"),
		nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("the system account's in-process connection: %w", err)
	}
	return &clusterSystem{srv: srv, nc: nc}, nil
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

// close closes the connection.
func (cs *clusterSystem) close() { cs.nc.Close() }
