package faults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/loadtest"
)

// Tenant is the one tenant the suite writes as.
const Tenant = "faults"

// secret is the cluster secret of every run: the cluster lives on loopback
// for a minute and is then deleted.
const secret = "a-fault-suite-secret-0123456789"

// Cluster is a run's gateway processes on loopback, each on its own data
// directory under Dir.
type Cluster struct {
	Binary  string // the gateway binary
	Dir     string
	Nodes   []*Node
	Spares  []*Node // laid out, not started by Start: nodes that join later (NewCluster)
	Token   string  // an admin token of Tenant
	log     *slog.Logger
	net     *netnet   // nil: every node on loopback
	mounted []string  // data directories on their own tmpfs
	lazy    []*lazyFS // data directories on the lazy FUSE filesystem
}

// Node is one gateway process. Cmd is nil while it is stopped.
type Node struct {
	Name, Addr, ClusterAddr, NATSAddr, MetricsAddr, Data string
	index                                                int
	netns                                                string // the node's network namespace; empty: the root's
	args                                                 []string
	cmd                                                  *exec.Cmd
	exited                                               chan struct{}
	logFile                                              *os.File
}

// URL is the node's HTTP base URL.
func (n *Node) URL() string { return "http://" + n.Addr }

// freePorts returns k loopback ports free now.
func freePorts(k int) ([]string, error) {
	var out []string
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range k {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("faults: free port: %w", err)
		}
		lns = append(lns, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// NewCluster lays out n nodes under dir (keys, secret, one data directory
// each) and spares more that may join later, without starting them; with
// netns each in its own network namespace (Close removes them). A spare
// lists the n nodes and itself in --routes, the n nodes do not list it:
// it joins as a node added to a running cluster does (docs/CLUSTERING.md,
// "Peers").
func NewCluster(binary, dir string, n, spares int, netns bool, log *slog.Logger) (*Cluster, error) {
	key, err := loadtest.WriteKeyFile(filepath.Join(dir, "keys.json"), Tenant, 0)
	if err != nil {
		return nil, fmt.Errorf("faults: key file: %w", err)
	}
	tok, err := key.Mint(time.Hour)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(secret+"\n"), 0o600); err != nil {
		return nil, err
	}
	total := n + spares
	ports, err := freePorts(nodePorts * total)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Binary: binary, Dir: dir, Token: tok, log: log}
	if netns {
		if c.net, err = newNetnet(total); err != nil {
			return nil, err
		}
		for k := range total { // each node has its own address: the usual ports
			a := c.net.addr(k)
			copy(ports[nodePorts*k:], []string{a + ":8080", a + ":6222", a + ":4222", a + ":9464"})
		}
	}
	var routes []string
	for i := range n {
		routes = append(routes, "nats://"+ports[nodePorts*i+1])
	}
	for i := range total {
		nodeRoutes := routes
		if i >= n {
			nodeRoutes = append(slices.Clone(routes), "nats://"+ports[nodePorts*i+1])
		}
		nd := c.layNode(i, ports[nodePorts*i:nodePorts*(i+1)], nodeRoutes)
		if i < n {
			c.Nodes = append(c.Nodes, nd)
		} else {
			c.Spares = append(c.Spares, nd)
		}
	}
	return c, nil
}

// nodePorts is how many ports a node listens on: HTTP, cluster routes,
// NATS clients, metrics.
const nodePorts = 4

// layNode returns node i (n<i+1>) on ports (nodePorts of them) with routes.
func (c *Cluster) layNode(i int, ports, routes []string) *Node {
	nd := &Node{Name: fmt.Sprintf("n%d", i+1), Addr: ports[0], ClusterAddr: ports[1], NATSAddr: ports[2], MetricsAddr: ports[3],
		Data: filepath.Join(c.Dir, fmt.Sprintf("n%d", i+1)), index: i}
	if c.net != nil {
		nd.netns = c.net.ns(i)
	}
	nd.args = []string{"--keys", filepath.Join(c.Dir, "keys.json"), "--data", nd.Data, "--addr", nd.Addr,
		"--metrics-addr", nd.MetricsAddr, "--node", nd.Name, "--cluster", "faults", "--cluster-listen", nd.ClusterAddr,
		"--routes", strings.Join(routes, ","), "--cluster-secret-file", filepath.Join(c.Dir, "secret"),
		"--replicas", "3", "--nats-listen", nd.NATSAddr}
	return nd
}

// Start starts every node and waits until all are ready.
func (c *Cluster) Start(ctx context.Context) error {
	for _, n := range c.Nodes {
		if err := c.StartNode(n); err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if err := c.WaitReady(ctx, n, 90*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// StartNode starts n's process, its log appended to <Dir>/<name>.log.
func (c *Cluster) StartNode(n *Node) error {
	if n.cmd != nil {
		return fmt.Errorf("faults: %s already running", n.Name)
	}
	f, err := os.OpenFile(filepath.Join(c.Dir, n.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.Binary, n.args...)
	if n.netns != "" { // ip netns exec execs the binary: the PID is the gateway's
		cmd = exec.Command("ip", append([]string{"netns", "exec", n.netns, c.Binary}, n.args...)...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	// A gateway dies with the suite, even where the suite itself dies
	// without running its cleanup (a panic, a kill -9).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("faults: start %s: %w", n.Name, err)
	}
	n.cmd, n.logFile, n.exited = cmd, f, make(chan struct{})
	go func(done chan struct{}) { // owned by the node: ends when the process does
		cmd.Wait()
		f.Close()
		close(done)
	}(n.exited)
	return nil
}

// Signal sends sig to n's process (SIGCONT too, so a stopped one acts).
func (n *Node) Signal(sig syscall.Signal) error {
	if n.cmd == nil {
		return fmt.Errorf("faults: %s not running", n.Name)
	}
	return n.cmd.Process.Signal(sig)
}

// Stop sends sig to n and waits up to wait for it to exit, then kills it.
func (n *Node) Stop(sig syscall.Signal, wait time.Duration) error {
	if n.cmd == nil {
		return nil
	}
	n.cmd.Process.Signal(sig)
	n.cmd.Process.Signal(syscall.SIGCONT) // a paused process must run to die of SIGTERM
	var err error
	select {
	case <-n.exited:
	case <-time.After(wait):
		err = fmt.Errorf("faults: %s did not exit within %v of %v", n.Name, wait, sig)
		n.cmd.Process.Kill()
		<-n.exited
	}
	n.cmd = nil
	return err
}

// Running reports whether n's process was started and not stopped by Stop.
func (n *Node) Running() bool { return n.cmd != nil }

// Close stops every node (SIGKILL) and removes the namespaces: the run is
// over.
func (c *Cluster) Close() {
	for _, n := range append(slices.Clone(c.Nodes), c.Spares...) {
		n.Stop(syscall.SIGKILL, 10*time.Second)
	}
	c.unmountData()
	c.unmountLazy()
	if c.net != nil {
		c.net.close()
	}
}

// WaitReady waits until n's /readyz answers 200.
func (c *Cluster) WaitReady(ctx context.Context, n *Node, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	hc := &http.Client{Timeout: time.Second}
	for {
		if resp, err := hc.Get(n.URL() + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("faults: %s not ready within %v (log %s)", n.Name, limit, filepath.Join(c.Dir, n.Name+".log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Leader returns the node leading Tenant's stream, asked of any running
// node's --nats-listen other than skip; it waits up to limit for one.
func (c *Cluster) Leader(ctx context.Context, limit time.Duration) (*Node, error) {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		for _, n := range c.Nodes {
			if !n.Running() {
				continue
			}
			name, err := c.askLeader(ctx, n)
			if err != nil {
				last = err
				continue
			}
			for _, m := range c.Nodes {
				if m.Name == name {
					return m, nil
				}
			}
			last = fmt.Errorf("faults: leader %q is no node of ours", name)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("faults: no stream leader within %v: %w", limit, last)
}

// askLeader asks n's JetStream for the leader of Tenant's stream (named
// RW_<tenant>, docs/OPERATIONS.md).
func (c *Cluster) askLeader(ctx context.Context, n *Node) (string, error) {
	info, err := c.streamCluster(ctx, n)
	if err != nil {
		return "", err
	}
	return info.Leader, nil
}

// streamCluster asks n's JetStream for Tenant's stream's Raft group: its
// leader and the other replicas.
func (c *Cluster) streamCluster(ctx context.Context, n *Node) (*jetstream.ClusterInfo, error) {
	info, err := c.streamInfo(ctx, n)
	if err != nil {
		return nil, err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return nil, errors.New("faults: stream has no leader")
	}
	return info.Cluster, nil
}

// streamInfo asks n's JetStream for Tenant's stream's info (its state and
// Raft group), as the stream's leader answers it.
func (c *Cluster) streamInfo(ctx context.Context, n *Node) (*jetstream.StreamInfo, error) {
	nc, err := nats.Connect("nats://"+n.NATSAddr, nats.UserInfo(hub.ClientUser, hub.ClientPassword(secret)),
		nats.Timeout(2*time.Second), nats.MaxReconnects(0))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "RW_"+Tenant)
	if err != nil {
		return nil, err
	}
	return s.CachedInfo(), nil
}

// StreamPeers returns the node leading Tenant's stream and the nodes
// holding its other replicas, asked of the first running node that
// answers within limit.
func (c *Cluster) StreamPeers(ctx context.Context, limit time.Duration) (*Node, []*Node, error) {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, n := range c.Nodes {
			if !n.Running() {
				continue
			}
			info, err := c.streamCluster(ctx, n)
			if err != nil {
				last = err
				continue
			}
			leader, followers := c.byName(info.Leader), []*Node(nil)
			for _, p := range info.Replicas {
				if f := c.byName(p.Name); f != nil {
					followers = append(followers, f)
				}
			}
			if leader != nil {
				return leader, followers, nil
			}
			last = fmt.Errorf("faults: leader %q is no node of ours", info.Leader)
		}
		sleep(ctx, 200*time.Millisecond)
	}
	return nil, nil, fmt.Errorf("faults: no stream leader within %v: %w", limit, last)
}

// byName returns the node (of Nodes) called name, or nil.
func (c *Cluster) byName(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Follower returns a running node other than leader.
func (c *Cluster) Follower(leader *Node) *Node {
	for _, n := range c.Nodes {
		if n != leader && n.Running() {
			return n
		}
	}
	return nil
}
