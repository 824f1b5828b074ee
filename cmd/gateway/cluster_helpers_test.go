package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// cluster is a test's embedded cluster of gateway processes on loopback.
type cluster struct {
	nodes     []*clusterNode
	tok       string // an admin token of tenant t1
	keys      string // the key file
	secret    string // the cluster secret file
	ports     []string
	natsPorts map[*clusterNode]string // each node's --nats-listen port
	env       []string                // more settings of every node (RANKWIRE_*=...)
	argv      []string                // the command that runs a node; nil: this test binary (os.Args[0])
	nodeEnv   map[int][]string        // more settings of node i only, after env
}

// startCluster starts k nodes with 3 replicas, every one with a
// --nats-listen port and the settings in env, and waits until all are
// ready.
func startCluster(t *testing.T, k int, env ...string) *cluster {
	t.Helper()
	return startClusterWith(t, k, nil, env...)
}

// startClusterWith is startCluster with set called on the cluster before
// any node starts: to give it another key file and token, another binary
// (argv) or settings of one node (nodeEnv).
func startClusterWith(t *testing.T, k int, set func(c *cluster), env ...string) *cluster {
	t.Helper()
	keys, sk := keyFile(t)
	c := &cluster{tok: adminToken(t, sk), keys: keys, natsPorts: map[*clusterNode]string{}, env: env}
	if set != nil {
		set(c)
	}
	c.secret = filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(c.secret, []byte("a-test-cluster-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ports = freePorts(t, k+1) // one spare: a node that joins later
	addrs := make([]chan string, k)
	for i := range k {
		n := c.newNode(t, i)
		c.nodes = append(c.nodes, n)
		addrs[i] = n.launch(t)
	}
	start := time.Now()
	for i, n := range c.nodes {
		n.wait(t, addrs[i])
	}
	// Listening is not ready: a node answers writes once /readyz says so
	// (the cluster's meta leader and the streams' leaders answered).
	for _, n := range c.nodes {
		awaitReadyz(t, n, http.StatusOK, 60*time.Second)
	}
	t.Logf("%d nodes ready in %v", k, time.Since(start).Round(time.Millisecond))
	return c
}

// newNode returns node i (n<i+1>) on a new data directory, routed to
// nodes 0..i (a node that joins later lists the others and itself; the
// first ones do not list it: JetStream would count it in their quorum).
func (c *cluster) newNode(t *testing.T, i int) *clusterNode {
	var routes []string
	for _, p := range c.ports[:max(i+1, len(c.ports)-1)] {
		routes = append(routes, "nats://127.0.0.1:"+p)
	}
	natsPort := freePorts(t, 1)[0]
	n := &clusterNode{env: []string{"RANKWIRE_KEYS=" + c.keys, "RANKWIRE_DATA=" + t.TempDir(),
		"RANKWIRE_NODE=n" + fmt.Sprint(i+1), "RANKWIRE_CLUSTER=rw-test", "RANKWIRE_CLUSTER_LISTEN=127.0.0.1:" + c.ports[i],
		"RANKWIRE_ROUTES=" + strings.Join(routes, ","), "RANKWIRE_CLUSTER_SECRET_FILE=" + c.secret,
		"RANKWIRE_NATS_LISTEN=127.0.0.1:" + natsPort}}
	n.env = append(append(n.env, c.env...), c.nodeEnv[i]...)
	n.argv = c.argv
	c.natsPorts[n] = natsPort
	return n
}

// natsURL is node n's authenticated NATS client listener.
func (c *cluster) natsURL(t *testing.T, n *clusterNode) string {
	t.Helper()
	return "nats://127.0.0.1:" + c.natsPorts[n]
}

// jetStream connects to node n's --nats-listen with the secret's password.
func (c *cluster) jetStream(t *testing.T, n *clusterNode) (jetstream.JetStream, func()) {
	t.Helper()
	secret, err := readSecret(c.secret)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(c.natsURL(t, n), nats.UserInfo(hub.ClientUser, hub.ClientPassword(secret)))
	if err != nil {
		t.Fatalf("--nats-listen: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js, nc.Close
}

// streamLeader returns the index of the node leading stream.
func (c *cluster) streamLeader(t *testing.T, stream string) int {
	t.Helper()
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	leader := -1
	await.For(t, 20*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream %s has no leader yet", stream)
		}
		_, err = fmt.Sscanf(info.Cluster.Leader, "n%d", &leader)
		leader--
		return err
	})
	return leader
}

// samePages reads the top 1,000 of board b on every node and fails unless
// all are equal; it stores the page.
func samePages(ns []*clusterNode, tok string, out *topPage) error {
	var pages []topPage
	for i, n := range ns {
		var pg topPage
		if status, err := call("GET", n.p.url("/v1/boards/b/top?limit=1000"), tok, "", &pg); status != 200 || err != nil {
			return fmt.Errorf("node %d: %d %v", i+1, status, err)
		}
		pages = append(pages, pg)
	}
	for i, pg := range pages[1:] {
		if pg.String() != pages[0].String() {
			return fmt.Errorf("node %d: %v; node 1: %v", i+2, pg, pages[0])
		}
	}
	*out = pages[0]
	return nil
}

// haveEveryAcked fails unless node n's board b holds member m<i> with
// score i for every acknowledged submission i.
func haveEveryAcked(t *testing.T, n *clusterNode, tok string, acked []int) {
	t.Helper()
	var pg topPage
	if status, err := call("GET", n.p.url("/v1/boards/b/top?limit=1000"), tok, "", &pg); status != 200 || err != nil {
		t.Fatalf("top: %d %v", status, err)
	}
	have := map[string]float64{}
	for _, r := range pg.Rows {
		have[r.Member] = r.Score
	}
	for _, i := range acked {
		if s, ok := have[fmt.Sprint("m", i)]; !ok || s != float64(i) {
			t.Fatalf("acknowledged submission %d missing on a node (of %d acked; the board has %d)", i, len(acked), pg.Total)
		}
	}
}

// liveView is a WebSocket client's state of a top-10 view of board b: its
// rows by rank and seq, kept by applying snapshots and diffs as the
// protocol says, with the first break of the prev chain.
type liveView struct {
	mu     sync.Mutex
	seq    uint64
	rows   map[int]string // rank -> "member:score"
	broken error
	diffs  int
	beats  []bool // each heartbeat's writable, in order
}

type wsRow struct {
	Rank   int     `json:"rank"`
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

type wsMsg struct {
	Type string  `json:"type"`
	Seq  uint64  `json:"seq"`
	Prev uint64  `json:"prev"`
	Rows []wsRow `json:"rows"`
	Gone []int   `json:"gone"`
	// Writable is a heartbeat's.
	Writable bool `json:"writable"`
}

func (v *liveView) apply(m wsMsg) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch m.Type {
	case "snapshot":
		v.rows = map[int]string{}
	case "diff":
		if m.Prev != v.seq && v.broken == nil {
			v.broken = fmt.Errorf("diff prev %d after seq %d", m.Prev, v.seq)
		}
		v.diffs++
	case "heartbeat":
		v.beats = append(v.beats, m.Writable)
		return
	default:
		return
	}
	for _, r := range m.Gone {
		delete(v.rows, r)
	}
	for _, r := range m.Rows {
		v.rows[r.Rank] = fmt.Sprintf("%s:%v", r.Member, r.Score)
	}
	v.seq = m.Seq
}

// watch is one subscription over one connection, read by a goroutine that
// ends when the connection does.
type watch struct {
	view *liveView
	ws   *websocket.Conn
	done chan struct{}
}

// subscribeTop opens a WebSocket to n, subscribes to board b's top 10
// (resuming from since where non-zero) and reads it into view until the
// connection ends.
func subscribeTop(t *testing.T, n *clusterNode, tok string, view *liveView, since uint64) *watch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+n.p.addr+"/v1/ws?access_token="+tok, nil)
	if err != nil {
		t.Fatalf("websocket to %s: %v", n.p.addr, err)
	}
	sub := map[string]any{"type": "subscribe", "id": "w", "board": "b", "view": map[string]any{"kind": "top", "limit": 10}}
	if since > 0 {
		sub["since"] = since
	}
	if err := wsjson.Write(ctx, ws, sub); err != nil {
		t.Fatal(err)
	}
	w := &watch{view: view, ws: ws, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			var m wsMsg
			if err := wsjson.Read(context.Background(), ws, &m); err != nil {
				return
			}
			view.apply(m)
		}
	}()
	t.Cleanup(func() { ws.CloseNow(); <-w.done })
	return w
}

// startWatch subscribes a client through n and waits for its snapshot.
func startWatch(t *testing.T, n *clusterNode, tok string) *watch {
	t.Helper()
	w := subscribeTop(t, n, tok, &liveView{}, 0)
	await.For(t, 10*time.Second, func() error {
		w.view.mu.Lock()
		defer w.view.mu.Unlock()
		if w.view.rows == nil {
			return fmt.Errorf("no snapshot yet")
		}
		return nil
	})
	return w
}

// resume waits for w's connection to end (its node was killed), resumes
// the view on n with since, and waits until it shows n's top 10: the
// first message after the resume must be a diff continuing the chain.
func (w *watch) resume(t *testing.T, n *clusterNode, tok string) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the WebSocket to the killed node did not end")
	}
	w.view.mu.Lock()
	since, diffsBefore := w.view.seq, w.view.diffs
	w.view.mu.Unlock()
	subscribeTop(t, n, tok, w.view, since)
	await.For(t, 20*time.Second, func() error {
		var pg topPage
		if status, err := call("GET", n.p.url("/v1/boards/b/top?limit=10"), tok, "", &pg); status != 200 || err != nil {
			return fmt.Errorf("top: %d %v", status, err)
		}
		var want []string
		for i, r := range pg.Rows {
			want = append(want, fmt.Sprintf("%d=%s:%v", i+1, r.Member, r.Score))
		}
		w.view.mu.Lock()
		defer w.view.mu.Unlock()
		if w.view.broken != nil {
			t.Fatalf("the prev chain broke: %v", w.view.broken)
		}
		var got []string
		for r := 1; r <= 10; r++ {
			if s, ok := w.view.rows[r]; ok {
				got = append(got, fmt.Sprintf("%d=%s", r, s))
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("view %v, node's top %v", got, want)
		}
		if w.view.diffs == diffsBefore {
			return fmt.Errorf("no diff since the resume from seq %d", since)
		}
		return nil
	})
	t.Logf("the WebSocket client resumed on another node from seq %d with an unbroken prev chain", since)
}

// fourthFromSharedSnapshot stops a node gracefully, restarts it, then
// starts a fourth node with an empty --data and checks it loaded the shared
// snapshot (a checkpoint's the cluster agreed with: the cluster must check
// often enough, --fingerprint-every) and equals the others.
func (c *cluster) fourthFromSharedSnapshot(t *testing.T, want topPage) {
	t.Helper()
	n := c.nodes[1]
	// A node restarted moments ago may still be opening the bucket in the
	// background (the cluster's JetStream settling): it uploads only once
	// open.
	await.For(t, 30*time.Second, func() error {
		if len(n.p.logged(regexp.MustCompile(`snapshots shared through the bucket`))) == 0 {
			return fmt.Errorf("node %d has not opened the snapshot bucket", 1)
		}
		return nil
	})
	stop(t, n.p)
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	await.For(t, 10*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		os, err := js.ObjectStore(ctx, "rankwire_snapshots")
		if err == nil {
			_, err = os.GetInfo(ctx, "t1")
		}
		if err != nil {
			return fmt.Errorf("no shared snapshot after a graceful stop: %v; the stopped node's snapshot lines %q", err, n.p.logged(regexp.MustCompile(`snapshot`)))
		}
		return nil
	})
	n.wait(t, n.launch(t))
	fourth := c.newNode(t, len(c.nodes))
	start := time.Now()
	fourth.wait(t, fourth.launch(t))
	t.Logf("a fourth node with an empty --data ready in %v", time.Since(start).Round(time.Millisecond))
	loaded := regexp.MustCompile(`loaded the shared snapshot" tenant=t1 seq=([0-9]+)`)
	await.For(t, 20*time.Second, func() error {
		if got := fourth.p.logged(loaded); len(got) != 1 {
			return fmt.Errorf("the fourth node logged %d shared-snapshot loads, want 1; its snapshot lines %q",
				len(got), fourth.p.logged(regexp.MustCompile(`snapshot`)))
		}
		return nil
	})
	var got topPage
	await.For(t, 20*time.Second, func() error { return samePages(append(slices.Clone(c.nodes), fourth), c.tok, &got) })
	if got.Seq != want.Seq || got.String() != want.String() {
		t.Fatalf("after the fourth node joined: %v, want %v", got, want)
	}
	t.Logf("the fourth node: %s; equal to the others at seq %d", fourth.p.logged(loaded)[0], got.Seq)
}

// leaderChanged checks that every survivor logged the tenant stream's new
// leader, not the killed node, and counts it in its metrics.
func leaderChanged(t *testing.T, survivors []*clusterNode, killed int) {
	t.Helper()
	elected := regexp.MustCompile(`stream leader elected" tenant=t1 leader=n([0-9])`)
	metricsAt := regexp.MustCompile(`msg=ready .*metrics_addr=(\S+)`)
	for _, n := range survivors {
		await.For(t, 10*time.Second, func() error {
			lines := n.p.logged(elected)
			if len(lines) == 0 {
				return fmt.Errorf("no leader election logged")
			}
			if m := elected.FindStringSubmatch(lines[len(lines)-1]); m[1] == fmt.Sprint(killed+1) {
				return fmt.Errorf("the last election logged names the killed node: %s", lines[len(lines)-1])
			}
			return nil
		})
		m := metricsAt.FindStringSubmatch(n.p.logged(metricsAt)[0])
		resp, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !regexp.MustCompile(`(?m)^rankwire_nats_stream_leader_changes_total [1-9]`).Match(body) {
			t.Fatalf("no leader change counted in the metrics")
		}
	}
}
