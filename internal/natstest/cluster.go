package natstest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/testport"
)

// Cluster starts n embedded servers in-process as one JetStream cluster
// with the gateway's own options (natsconf.ServerOptions), each shut down
// at t's cleanup, and returns them at once: a test waits for what it needs
// (a meta leader, a stream placed). c names the cluster and its secret;
// Cluster fills in its Routes and, when empty, its System password, and
// returns it so filled; each node n<i> (1-based) gets its own route
// listener and a store in a temp dir.
func Cluster(t testing.TB, c natsconf.Cluster, n int) ([]*server.Server, natsconf.Cluster) {
	t.Helper()
	var ports []string
	c.Routes = nil
	for _, p := range testport.FreeN(t, n) { // route listeners bind them by number (internal/testport says why not :0)
		ports = append(ports, strconv.Itoa(p))
		c.Routes = append(c.Routes, "nats://127.0.0.1:"+strconv.Itoa(p))
	}
	if c.System == "" {
		pass, err := natsconf.NewSystemPassword()
		if err != nil {
			t.Fatal(err)
		}
		c.System = pass
	}
	var srvs []*server.Server
	for i, p := range ports {
		node := c
		node.Node, node.Listen = fmt.Sprintf("n%d", i+1), "127.0.0.1:"+p
		srvs = append(srvs, clusterNode(t, node))
	}
	return srvs, c
}

// clusterNode starts one node of a Cluster, its store in a temp dir.
func clusterNode(t testing.TB, c natsconf.Cluster) *server.Server {
	t.Helper()
	opts, err := natsconf.ServerOptions(natsconf.Embedded{StoreDir: filepath.Join(t.TempDir(), "nats"), Cluster: c})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Shutdown)
	return s
}
