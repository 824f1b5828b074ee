package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/testport"
)

// clusterNode is one gateway process of a 3-node embedded cluster: its
// environment is kept so that it restarts on the same --data and ports.
type clusterNode struct {
	env  []string
	argv []string // the command that runs it; nil: this test binary (os.Args[0])
	p    *proc
}

// launch starts the node's process without waiting for it: a clustered
// node is ready only once a quorum is up, so the test starts all three
// before waiting on any.
func (n *clusterNode) launch(t *testing.T) chan string {
	t.Helper()
	argv := n.argv
	if argv == nil {
		argv = []string{os.Args[0]}
	}
	p, addr := spawnGateway(t, argv, n.env...)
	n.p = p
	return addr
}

// wait takes the node's ready address, failing at once where the node
// exited first, and after 90 s where it is still starting. A start that
// sat that long (rarely, under load: "waiting for a majority" with every
// route answering) is stopped with SIGQUIT, so that the failure shows
// where its goroutines were: the hub's start and the embedded server's
// JetStream (its meta group and Raft), out of the dump's hundreds.
func (n *clusterNode) wait(t *testing.T, addr chan string) {
	t.Helper()
	select {
	case n.p.addr = <-addr:
		return
	case err := <-n.p.done:
		n.p.done <- err
		t.Fatalf("node exited before it was ready: %v; log:\n%s", err, n.p.report())
	case <-time.After(90 * time.Second):
	}
	t.Fatalf("node not ready after 90 s; %s", n.stuck())
}

// stuck stops n with SIGQUIT and returns its log and the goroutines of
// its dump that say where a start is stuck.
func (n *clusterNode) stuck() string {
	_ = n.p.cmd.Process.Signal(syscall.SIGQUIT) // the Go runtime prints every goroutine to stderr: the log
	select {
	case err := <-n.p.done:
		n.p.done <- err
	case <-time.After(20 * time.Second):
	}
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	log, stacks := splitDump(n.p.log)
	return fmt.Sprintf("log:\n%s\n\nits goroutines in the hub's start and JetStream's cluster (of %d):\n%s",
		strings.Join(log, "\n"), len(stacks), strings.Join(goroutinesIn(stacks, startPackages), "\n\n"))
}

// startPackages are the stack frames that say where a start is stuck.
var startPackages = regexp.MustCompile(`rankwire/rankwire/hub\.|server\.\(\*jetStream\)|server\.\(\*raft\)|server\.\(\*Server\)\.(Start|ReadyForConnections|enableJetStream|startRaftNode)`)

// splitDump splits a process's log into its lines before a goroutine
// dump and the dump's goroutines, one string each.
func splitDump(lines []string) (log, stacks []string) {
	var cur []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(l, ":"):
			if cur != nil {
				stacks = append(stacks, strings.Join(cur, "\n"))
			}
			cur = []string{l}
		case cur != nil:
			cur = append(cur, l)
		default:
			log = append(log, l)
		}
	}
	if cur != nil {
		stacks = append(stacks, strings.Join(cur, "\n"))
	}
	return log, stacks
}

// goroutinesIn returns the stacks with a frame that re matches.
func goroutinesIn(stacks []string, re *regexp.Regexp) []string {
	var out []string
	for _, s := range stacks {
		if re.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// kill9 kills the node's process with SIGKILL and waits for it to exit.
func (n *clusterNode) kill9(t *testing.T) {
	t.Helper()
	if err := n.p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-n.p.done
	n.p.done <- err
}

// createBoard creates board b (policy latest) through node 1. The first
// write creates the tenant's stream (3 replicas, each fsynced): on a loaded
// box that may outlast one call's budget, or answer 503 while the stream's
// first election runs, and a PUT is safe to repeat.
func (c *cluster) createBoard(t *testing.T) {
	t.Helper()
	await.For(t, 30*time.Second, func() error {
		if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), c.tok, `{"policy":"latest"}`, nil); status != 200 {
			return fmt.Errorf("create board through node 1: %d %v", status, err)
		}
		return nil
	})
}

// freePorts returns k loopback TCP ports free a moment ago, below the
// kernel's ephemeral range (internal/testport says why).
func freePorts(t *testing.T, k int) []string {
	t.Helper()
	var out []string
	for _, p := range testport.FreeN(t, k) {
		out = append(out, strconv.Itoa(p))
	}
	return out
}

// topPage is the part of a top read the cluster test compares.
type topPage struct {
	Seq   uint64 `json:"seq"`
	Total int    `json:"total"`
	Rows  []struct {
		Member string  `json:"member"`
		Score  float64 `json:"score"`
	} `json:"rows"`
}

func (pg topPage) String() string {
	return fmt.Sprintf("seq %d total %d rows %v", pg.Seq, pg.Total, pg.Rows)
}

// TestThreeNodeCluster starts three gateway processes forming one
// embedded JetStream cluster with 3 replicas, writes with ids through two
// of them, and reads the same rows and seq on all three. It then kills -9
// the node leading the tenant's stream while a WebSocket client watches
// the board through it, keeps writing through the two others (logging the
// longest write gap), and checks: every acknowledged submission on both
// survivors; the client resumed on a survivor with since and an unbroken
// prev chain; the killed node restarted on its --data and equal; a
// stream's replicas brought back by a restart; and a fourth node with an
// empty --data ready from the shared snapshot, equal too.
//
// It runs in the default test run and in CI (about 30 s); -short skips it.
func TestThreeNodeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startCluster(t, 3, "RANKWIRE_FINGERPRINT_EVERY=10") // the bucket takes agreed checkpoints only: some within the test
	nodes, tok := c.nodes, c.tok
	c.createBoard(t)
	submit := func(n *clusterNode, i int) (int, error) {
		body := fmt.Sprintf(`{"id":"s%d","member":"m%d","score":%d}`, i, i, i)
		return call("POST", n.p.url("/v1/boards/b/scores"), tok, body, nil)
	}
	// The tenant's stream, new on node 1, reaches the other nodes (their
	// discovery), and the board with it.
	created := time.Now()
	await.For(t, 30*time.Second, func() error {
		if s, err := submit(nodes[1], 0); s != 200 {
			return fmt.Errorf("submit through node 2: %d %v", s, err)
		}
		return nil
	})
	t.Logf("a new tenant created on node 1 served by node 2 after %v", time.Since(created).Round(time.Millisecond))
	acked := []int{0}
	for i := 1; i <= 100; i++ {
		if status, err := submit(nodes[i%2], i); status != 200 {
			t.Fatalf("submit %d: %d %v", i, status, err)
		}
		acked = append(acked, i)
	}
	var before topPage
	await.For(t, 20*time.Second, func() error { return samePages(nodes, tok, &before) })
	t.Logf("all three nodes: seq %d, %d members", before.Seq, before.Total)

	leader := c.streamLeader(t, "RW_t1")
	victim := nodes[leader]
	var survivors []*clusterNode
	for i, n := range nodes {
		if i != leader {
			survivors = append(survivors, n)
		}
	}
	watch := startWatch(t, victim, tok)
	startWatch(t, survivors[0], tok) // a client there too: its node keeps the board's recent changes for since
	victim.kill9(t)
	t.Logf("killed n%d, the stream's leader", leader+1)
	var longest time.Duration
	last := time.Now()
	for i := 101; i <= 200; i++ {
		n := survivors[i%2]
		for attempt := 0; ; attempt++ { // same id: a retried submission applies once
			status, _ := submit(n, i)
			if status == 200 {
				break
			}
			if attempt > 300 {
				t.Fatalf("submit %d after the kill: still %d", i, status)
			}
			n = survivors[(i+attempt+1)%2]
		}
		acked = append(acked, i)
		longest = max(longest, time.Since(last))
		last = time.Now()
	}
	t.Logf("longest write gap with the stream's leader killed: %v", longest.Round(time.Millisecond))
	if longest > 15*time.Second {
		t.Fatalf("longest write gap %v", longest)
	}
	var mid topPage
	await.For(t, 20*time.Second, func() error { return samePages(survivors, tok, &mid) })
	leaderChanged(t, survivors, leader)
	for _, n := range survivors {
		haveEveryAcked(t, n, tok, acked)
	}
	watch.resume(t, survivors[0], tok)

	restart := time.Now()
	victim.wait(t, victim.launch(t))
	var after topPage
	await.For(t, 30*time.Second, func() error { return samePages(nodes, tok, &after) })
	t.Logf("killed node back and equal in %v: seq %d", time.Since(restart).Round(time.Millisecond), after.Seq)
	if after.Seq <= before.Seq {
		t.Fatalf("seq did not advance: %d then %d", before.Seq, after.Seq)
	}
	bringsReplicasBack(t, nodes[2], c.natsURL(t, nodes[(leader+1)%3]), c.secret)
	c.fourthFromSharedSnapshot(t, after)
}

// bringsReplicasBack lowers the tenant's stream to 1 replica through the
// --nats-listen port (with the secret's password), restarts node n, and
// sees the stream back at 3 replicas with n's log line saying so.
func bringsReplicasBack(t *testing.T, n *clusterNode, url, secretFile string) {
	t.Helper()
	secret, err := readSecret(secretFile)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, nats.UserInfo(hub.ClientUser, hub.ClientPassword(secret)))
	if err != nil {
		t.Fatalf("--nats-listen with the secret: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	replicas := func() int {
		s, err := js.Stream(ctx, "RW_t1")
		if err != nil {
			t.Fatalf("stream info: %v", err)
		}
		return s.CachedInfo().Config.Replicas
	}
	if r := replicas(); r != 3 {
		t.Fatalf("stream created with %d replicas, want 3", r)
	}
	s, _ := js.Stream(ctx, "RW_t1")
	cfg := s.CachedInfo().Config
	cfg.Replicas = 1
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatalf("lower to 1 replica: %v", err)
	}
	n.kill9(t)
	n.wait(t, n.launch(t))
	// The restarted node asks for the change while the cluster may still
	// see it offline, and retries until it can (hub.retryReplicas); its log
	// line comes a moment after the change: wait for both.
	changed := regexp.MustCompile(`stream brought to the configured replicas" stream=RW_t1 from=1 to=3`)
	await.For(t, 30*time.Second, func() error {
		if r := replicas(); r != 3 {
			return fmt.Errorf("after a restart with --replicas 3 the stream has %d replicas; the node logged: %q", r, n.p.logged(regexp.MustCompile(`replicas`)))
		}
		if got := n.p.logged(changed); len(got) != 1 {
			return fmt.Errorf("%d log lines for the replicas change, want 1", len(got))
		}
		return nil
	})
	for _, leak := range []string{secret, hub.ClientPassword(secret)} {
		if got := n.p.logged(regexp.MustCompile(regexp.QuoteMeta(leak))); len(got) > 0 {
			t.Fatalf("the log holds the secret or a password derived from it: %q", got[0])
		}
	}
}

// TestStuckStartShowsWhere: a node whose start does not end (here: alone
// of its three routes, it waits for a majority) is reported by stuck with
// the goroutine of the hub's start, where it waits, and the embedded
// server's JetStream cluster; not with the dump's other goroutines.
func TestStuckStartShowsWhere(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a gateway process")
	}
	c := &cluster{natsPorts: map[*clusterNode]string{}}
	c.keys, _ = keyFile(t)
	c.secret = filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(c.secret, []byte("a-test-cluster-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ports = freePorts(t, 4) // three routes and a spare; only node 1 runs
	n := c.newNode(t, 0)
	n.launch(t)
	await.For(t, 30*time.Second, func() error {
		if len(n.p.logged(regexp.MustCompile(`starting: waiting for a majority`))) == 0 {
			return fmt.Errorf("no wait for a majority logged yet")
		}
		return nil
	})
	report := n.stuck()
	for _, want := range []string{"hub.Start", "server.(*jetStream)", "starting: waiting for a majority"} {
		if !strings.Contains(report, want) {
			t.Fatalf("the report of a stuck start lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "os/signal.signal_recv") || strings.Contains(report, "reloader") {
		t.Fatalf("the report holds goroutines that say nothing about the start:\n%s", report)
	}
}
