package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/wire"
)

// TestPausedNodeReadiness pauses (SIGSTOP) the node leading the tenant's
// stream of a 3-node cluster for 6 s while writes go on through the two
// others, then resumes it (SIGCONT), and checks what the targets
// ask: the two healthy nodes answer /readyz 200 at every probe (every
// 100 ms) from before the pause until the paused node is ready again, 0
// flaps (--ready-hold set above the election's length here); the paused node answers 503 with a reason within 3 s of its
// resumption; a Go SDK Watch on the paused node resumes on another within
// 5 s (its read timeout set to 3 s) with the states in seq order.
//
// It runs in the default test run and in CI (about 25 s); -short skips it.
func TestPausedNodeReadiness(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	// The election after the leader's pause takes 1–2 s on an idle
	// machine, up to 5 s with three -race processes on a loaded 2-core
	// one: the hold is set above that (the default, 3 s, suits the first).
	c := startCluster(t, 3, "RANKWIRE_READY_HOLD=6s")
	tok := c.tok
	victim, healthy := leaderAndOthers(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := newPausedWriter(t, tok, healthy)
	await.For(t, 30*time.Second, func() error { return w.submit(ctx) }) // the stream reaches every node
	probes := make([]*readyProbe, len(healthy))
	for i, n := range healthy {
		probes[i] = startReadyProbe(ctx, t, n)
	}
	watcher := watchVia(ctx, t, tok, victim, healthy)
	watcher.await(t, "the first state through the node to pause", func(st client.ViewState) bool { return len(st.Rows) > 0 }, 20*time.Second)
	wctx, stopWriter := context.WithCancel(ctx)
	writes := w.run(wctx)

	pauseFor(t, victim, 6*time.Second, func(paused time.Time) {
		before := w.acked.Load()
		watcher.await(t, "a state through another node", func(st client.ViewState) bool {
			return len(st.Rows) > 0 && st.Rows[0].Score > float64(before)
		}, 5*time.Second)
		t.Logf("the Watch resumed on another node %v after the pause began", time.Since(paused).Round(time.Millisecond))
	})
	resumed := time.Now()
	reason := awaitReadyz(t, victim, http.StatusServiceUnavailable, 3*time.Second)
	t.Logf("the paused node answered 503 %v after SIGCONT: %q", time.Since(resumed).Round(time.Millisecond), reason)
	awaitReadyz(t, victim, http.StatusOK, 30*time.Second)
	t.Logf("the paused node ready again %v after SIGCONT", time.Since(resumed).Round(time.Millisecond))
	stopWriter()
	<-writes
	t.Logf("the writer's longest gap between acknowledgements: %v", w.longest.Round(time.Millisecond))
	checkStayedReady(t, probes, healthy)
	for i := 1; i < len(watcher.seqs); i++ {
		if watcher.seqs[i] <= watcher.seqs[i-1] {
			t.Fatalf("the Watch's seqs out of order: %v", watcher.seqs)
		}
	}
}

// pauseFor stops n's process with SIGSTOP, runs during (given the pause's
// start), waits out the rest of d, and resumes it with SIGCONT.
func pauseFor(t *testing.T, n *clusterNode, d time.Duration, during func(time.Time)) {
	t.Helper()
	if err := n.p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	resume := func() { _ = n.p.cmd.Process.Signal(syscall.SIGCONT) }
	defer resume() // also where during fails the test
	during(paused)
	// The pause's length is the fault itself: waiting it out is the test.
	time.Sleep(time.Until(paused.Add(d)))
}

// pausedWriter submits through the healthy nodes with the Go SDK, scores
// rising with every acknowledged submission.
type pausedWriter struct {
	t       *testing.T
	c       *client.Client
	acked   atomic.Int64  // the last acknowledged score
	last    time.Time     // run's: the last acknowledgement
	longest time.Duration // run's: the longest time between two, read after it ended
}

func newPausedWriter(t *testing.T, tok string, via []*clusterNode) *pausedWriter {
	var urls []string
	for _, n := range via {
		urls = append(urls, "http://"+n.p.addr)
	}
	c, err := client.New(urls, client.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	return &pausedWriter{t: t, c: c}
}

// submit submits the next score.
func (w *pausedWriter) submit(ctx context.Context) error {
	i := w.acked.Load() + 1
	_, err := w.c.Submit(ctx, "b", client.Score{ID: fmt.Sprint("s", i), Member: fmt.Sprint("m", i), Score: float64(i)})
	if err == nil {
		w.acked.Store(i)
	}
	return err
}

// run submits until ctx ends; the channel closes when it has.
func (w *pausedWriter) run(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.last = time.Now()
		for ctx.Err() == nil {
			if w.submit(ctx) == nil { // a failed one is retried with the same id
				w.longest = max(w.longest, time.Since(w.last))
				w.last = time.Now()
			}
		}
	}()
	return done
}

// readyProbe asks a node's /readyz every 100 ms and keeps what was not 200.
type readyProbe struct {
	mu   sync.Mutex
	n    int
	bad  []string
	stop func() (int, []string)
}

func startReadyProbe(ctx context.Context, t *testing.T, n *clusterNode) *readyProbe {
	p := &readyProbe{}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		hc := &http.Client{Timeout: 2 * time.Second}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			status, reason := readyz(hc, n)
			p.mu.Lock()
			p.n++
			if status != http.StatusOK {
				p.bad = append(p.bad, fmt.Sprintf("%s: %d %s", time.Now().Format("15:04:05.000"), status, reason))
			}
			p.mu.Unlock()
		}
	})
	p.stop = func() (int, []string) {
		cancel()
		wg.Wait()
		return p.n, p.bad
	}
	return p
}

// readyz asks n's /readyz once: its status and reason (an error's text
// where it did not answer).
func readyz(hc *http.Client, n *clusterNode) (int, string) {
	resp, err := hc.Get(n.p.url("/readyz"))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var r wire.Ready
	_ = json.NewDecoder(resp.Body).Decode(&r)
	return resp.StatusCode, r.Reason
}

// awaitReadyz waits until n's /readyz answers status, within d, and
// returns its reason, which a 503 must have.
func awaitReadyz(t *testing.T, n *clusterNode, status int, d time.Duration) string {
	t.Helper()
	hc := &http.Client{Timeout: d}
	var reason string
	await.For(t, d, func() error {
		var got int
		if got, reason = readyz(hc, n); got != status || status != http.StatusOK && reason == "" {
			return fmt.Errorf("readyz %d %q, want %d with a reason", got, reason, status)
		}
		return nil
	})
	return reason
}

// viaWatcher runs a Go SDK Watch of board b's top 1 on the gateways first,
// then the others, on its own goroutine (ended by ctx).
type viaWatcher struct {
	states chan client.ViewState
	seqs   []uint64
}

func watchVia(ctx context.Context, t *testing.T, tok string, first *clusterNode, others []*clusterNode) *viaWatcher {
	urls := []string{"http://" + first.p.addr}
	for _, n := range others {
		urls = append(urls, "http://"+n.p.addr)
	}
	c, err := client.New(urls, client.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	w := &viaWatcher{states: make(chan client.ViewState, 10000)}
	go func() {
		for st, err := range c.Watch(ctx, "b", client.Top(1), client.WatchReadTimeout(3*time.Second),
			client.WatchBackoff(50*time.Millisecond, time.Second)) {
			if err != nil {
				return
			}
			w.states <- st
		}
	}()
	return w
}

// await waits up to d for a state that ok accepts.
func (w *viaWatcher) await(t *testing.T, what string, ok func(client.ViewState) bool, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case st := <-w.states:
			w.seqs = append(w.seqs, st.Seq)
			if ok(st) {
				return
			}
		case <-deadline:
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// metricOf returns the value of the unlabelled series name on n's metrics
// listener.
func metricOf(t *testing.T, n *clusterNode, name string) string {
	t.Helper()
	at := regexp.MustCompile(`msg=ready .*metrics_addr=(\S+)`)
	lines := n.p.logged(at)
	if len(lines) == 0 {
		t.Fatal("no metrics address logged")
	}
	resp, err := http.Get("http://" + at.FindStringSubmatch(lines[len(lines)-1])[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in the metrics", name)
	}
	return string(m[1])
}

// TestMajorityLostNotReady kills two of three nodes, all but the tenant
// stream's leader: the survivor can acknowledge no write, and its /readyz says so, with a reason, once the
// fault has lasted --ready-hold (3 s), plus the probes' time; its
// heartbeats then say writable false.
func TestMajorityLostNotReady(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	// The survivor leads the stream (a leader cut from its followers still
	// answers as leader for a while, the case a readiness that asks only
	// "is there a leader" gets wrong), or follows it.
	for _, leads := range []bool{true, false} {
		t.Run(fmt.Sprintf("survivor leads %v", leads), func(t *testing.T) { majorityLost(t, leads) })
	}
}

// majorityLost kills two nodes of three and checks the third says it is
// cut off.
func majorityLost(t *testing.T, survivorLeads bool) {
	c := startCluster(t, 3)
	if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), c.tok, `{"policy":"latest"}`, nil); status != 200 {
		t.Fatalf("create board through node 1: %d %v", status, err)
	}
	leader := c.streamLeader(t, "RW_t1")
	keep := leader
	if !survivorLeads {
		keep = (leader + 1) % len(c.nodes)
	}
	survivor := c.nodes[keep]
	await.For(t, 30*time.Second, func() error { // the tenant open on the survivor: its stream observed
		if status, err := call("GET", survivor.p.url("/v1/boards/b"), c.tok, "", nil); status != 200 {
			return fmt.Errorf("board through the survivor: %d %v", status, err)
		}
		return nil
	})
	awaitReadyz(t, survivor, http.StatusOK, 10*time.Second)
	for i, n := range c.nodes {
		if i != keep {
			n.kill9(t)
		}
	}
	killed := time.Now()
	reason := awaitReadyz(t, survivor, http.StatusServiceUnavailable, 15*time.Second)
	el := time.Since(killed)
	t.Logf("the survivor answered 503 %v after the majority died: %q", el.Round(time.Millisecond), reason)
	// It hears 1 of 3 servers once beatSilence (1.25 s) has passed since
	// their last beats, and says so at its next beat (250 ms), without
	// --ready-hold: 1.5 s, and a loaded machine's slack.
	if el > 4*time.Second || !strings.Contains(reason, "cut off: hears from 1 of 3") {
		t.Errorf("503 after %v (%q), want cut off within about 1.5 s", el, reason)
	}
}

// TestKilledLeaderHealthyReadiness kills (SIGKILL) the node leading the
// tenant's stream of a 3-node cluster while an SDK writer submits through
// the two others, then starts it again on its data: the two healthy nodes
// answer /readyz 200 at every probe (every 100 ms) from before the kill
// until the killed node is ready again and the writes went on after its
// return, and their rankwire_ready_changes_total stays 1 (their first
// ready). A probe that is not 200 is reported with its reason. The hold is
// 6 s, as in TestPausedNodeReadiness (the election takes up to 5 s with
// three -race processes on a loaded 2-core machine): the replica of a
// healthy node is a probe behind when the leader dies, and before an
// election stopped counting against --max-lag (3 s) such a node turned
// 503 after an election longer than that, whatever the hold
// (internal/readiness, TestElectionDoesNotCountAgainstTheLag).
//
// It runs in the default test run and in CI (about 30 s); -short skips it.
func TestKilledLeaderHealthyReadiness(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startCluster(t, 3, "RANKWIRE_READY_HOLD=6s")
	victim, healthy := leaderAndOthers(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newPausedWriter(t, c.tok, healthy)
	await.For(t, 30*time.Second, func() error { return w.submit(ctx) }) // the stream reaches every node
	for _, n := range healthy {
		awaitReadyz(t, n, http.StatusOK, 10*time.Second)
	}
	probes := make([]*readyProbe, len(healthy))
	for i, n := range healthy {
		probes[i] = startReadyProbe(ctx, t, n)
	}
	wctx, stopWriter := context.WithCancel(ctx)
	writes := w.run(wctx)
	awaitAcked(t, w, 20, 20*time.Second) // the writer at full pace: a catch-up pending at every probe
	victim.kill9(t)
	killed := time.Now()
	awaitAcked(t, w, 20, 30*time.Second)
	t.Logf("writes through the healthy nodes resumed %v after the kill", time.Since(killed).Round(time.Millisecond))
	addr := victim.launch(t)
	victim.wait(t, addr)
	awaitReadyz(t, victim, http.StatusOK, 60*time.Second)
	t.Logf("the killed node ready again %v after the kill", time.Since(killed).Round(time.Millisecond))
	awaitAcked(t, w, 20, 20*time.Second) // its return, under writes
	time.Sleep(time.Second)              // the probes' window after the return: a flap there is what this test looks for
	stopWriter()
	<-writes
	t.Logf("the writer's longest gap between acknowledgements: %v", w.longest.Round(time.Millisecond))
	checkStayedReady(t, probes, healthy)
}

// awaitAcked waits up to d until w has had k more submissions
// acknowledged than when called.
func awaitAcked(t *testing.T, w *pausedWriter, k int64, d time.Duration) {
	t.Helper()
	from := w.acked.Load()
	await.For(t, d, func() error {
		if got := w.acked.Load() - from; got < k {
			return fmt.Errorf("%d of %d more submissions acknowledged", got, k)
		}
		return nil
	})
}

// checkStayedReady stops the probes of the healthy nodes and fails the
// test unless each answered 200 at every one of at least 20 probes and
// turned ready once only (its first).
func checkStayedReady(t *testing.T, probes []*readyProbe, healthy []*clusterNode) {
	t.Helper()
	for i, p := range probes {
		n, bad := p.stop()
		t.Logf("healthy node %d: %d probes of /readyz, %d not 200", i+1, n, len(bad))
		if len(bad) > 0 || n < 20 {
			t.Errorf("healthy node %d: %d of %d probes not 200: %v", i+1, len(bad), n, bad)
		}
	}
	for _, n := range healthy {
		if got := metricOf(t, n, "rankwire_ready_changes_total"); got != "1" {
			t.Errorf("a healthy node's rankwire_ready_changes_total %s, want 1 (its first ready only)", got)
		}
	}
}

// leaderAndOthers creates board b (and so tenant t1's stream) through the
// first node and returns the node leading the stream and the other two.
func leaderAndOthers(t *testing.T, c *cluster) (*clusterNode, []*clusterNode) {
	t.Helper()
	if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), c.tok, `{"policy":"latest"}`, nil); status != 200 {
		t.Fatalf("create board through node 1: %d %v", status, err)
	}
	leader := c.streamLeader(t, "RW_t1")
	var others []*clusterNode
	for i, n := range c.nodes {
		if i != leader {
			others = append(others, n)
		}
	}
	return c.nodes[leader], others
}
