package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
)

// TestPlannedLeaderStop stops the stream's leader with SIGTERM under a Go
// SDK writer pinned to it (its first gateway), and checks: the leader hands
// its leadership over before it closes, the writer sees no failed call
// (it moves on with the same idempotency id), every acknowledged
// submission is on the survivors, and every node, the last two stopped
// together, exits within 5 s of its SIGTERM. It logs the writer's longest
// gap between acknowledgements (the target for a planned stop: 100 ms).
// Runs alternate (-count) between a stream leader that also leads the
// JetStream meta group, which must hand that over too, and one that does
// not: the test moves the stream's leadership to or away from the meta
// leader first.
func TestPlannedLeaderStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startSettledCluster(t)
	alsoMeta := plannedRuns.Add(1)%2 == 1
	leader := c.placeStreamLeader(t, "RW_t1", alsoMeta)
	var order []*clusterNode // the leader first: the writer starts there
	order = append(order, c.nodes[leader])
	for i, n := range c.nodes {
		if i != leader {
			order = append(order, n)
		}
	}
	w, termAt, took := plannedStop(t, c, order, order[0])
	t.Logf("the stream's leader (n%d) exited %v after SIGTERM", leader+1, took.Round(time.Millisecond))
	handed := regexp.MustCompile(`stream leadership handed over" stream=RW_t1 leader=n([0-9])`)
	if got := order[0].p.logged(handed); len(got) != 1 {
		t.Fatalf("the leader logged %d handovers of RW_t1, want 1; its log:\n%s", len(got), order[0].p.report())
	} else {
		t.Logf("the leader: %s", got[0])
	}
	metaHanded := regexp.MustCompile(`meta leadership handed over" leader=n([0-9])`)
	if got := order[0].p.logged(metaHanded); alsoMeta && len(got) != 1 {
		t.Fatalf("the meta leader logged %d handovers of the meta group, want 1; its log:\n%s", len(got), order[0].p.report())
	} else if alsoMeta {
		t.Logf("the meta leader: %s", got[0])
	}
	t.Logf("the writer: %d acknowledged, %d failed calls, longest gap between acknowledgements %v",
		w.acked.Load(), w.failed.Load(), w.longest.Round(time.Millisecond))
	t.Logf("the longest gap ended %v after the SIGTERM; the longest from the SIGTERM on: %v (stopping node also the meta leader: %v)",
		w.longestAt.Sub(termAt).Round(time.Millisecond), w.longestAfter.Round(time.Millisecond), alsoMeta)
	w.checkGaps(t, c, termAt)
	acked := make([]int, 0, w.acked.Load())
	for i := 1; i <= int(w.acked.Load()); i++ {
		acked = append(acked, i)
	}
	for _, n := range order[1:] {
		await.For(dumpOnFail{t, c}, 10*time.Second, func() error { return holdsAcked(n, c.tok, len(acked)) })
		haveEveryAcked(t, n, c.tok, acked)
	}
	stopAllWithin(t, order[1:], 5*time.Second)
	if took > 5*time.Second {
		t.Fatalf("the leader took %v to stop, want under 5 s", took)
	}
}

// startSettledCluster starts three gateway processes as one cluster,
// creates board b (policy latest) through node 1 and waits until the
// cluster has settled (settled): the start of a planned stop's test.
func startSettledCluster(t *testing.T) *cluster {
	t.Helper()
	c := startCluster(t, 3)
	c.createBoard(t)
	settled(t, c)
	return c
}

// plannedStop stops n with SIGTERM under a handoffWriter of c's tenant through via: the
// writer has 20 submissions acknowledged before the SIGTERM and 50 after
// n exited, then stops. It returns the writer, ended, the time of the
// SIGTERM and how long n took to exit.
func plannedStop(t *testing.T, c *cluster, via []*clusterNode, n *clusterNode) (w *handoffWriter, termAt time.Time, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w = newHandoffWriter(t, c.tok, via)
	await.For(t, 30*time.Second, func() error { return w.submit(ctx) })
	wctx, stopWriter := context.WithCancel(ctx)
	writes := w.run(wctx)
	at := w.acked.Load()
	await.For(t, 20*time.Second, func() error { return w.progressed(at, 20) })
	termAt = time.Now()
	w.stopAt.Store(termAt.UnixNano())
	took = sigterm(t, n)
	at = w.acked.Load()
	await.For(t, 20*time.Second, func() error { return w.progressed(at, 50) })
	stopWriter()
	<-writes
	return w, termAt, took
}

// checkGaps logs each of the ended writer's gaps over 100 ms after
// termAt, with what c's nodes logged and what it sent meanwhile, and
// fails the test if any call failed: a planned stop loses none.
func (w *handoffWriter) checkGaps(t *testing.T, c *cluster, termAt time.Time) {
	t.Helper()
	for _, g := range w.slow {
		t.Logf("a gap of %v, from %v to %v after the SIGTERM; the nodes' logs meanwhile:\n%s\nthe writer's requests meanwhile:\n%s", g[1].Sub(g[0]).Round(time.Millisecond),
			g[0].Sub(termAt).Round(time.Millisecond), g[1].Sub(termAt).Round(time.Millisecond), logsBetween(c, g[0], g[1]),
			w.trace.between(g[0], g[1], termAt))
	}
	if f := w.failed.Load(); f != 0 {
		t.Fatalf("%d failed calls during a planned stop; first: %v", f, w.firstErr)
	}
}

// logsBetween returns the lines every node of c logged between from and
// to (and 50 ms around), each prefixed with its node.
func logsBetween(c *cluster, from, to time.Time) string {
	at := regexp.MustCompile(`^time=(\S+)`)
	var out []string
	for i, n := range c.nodes {
		for _, line := range n.p.logged(at) {
			ts, err := time.Parse(time.RFC3339Nano, at.FindStringSubmatch(line)[1])
			if err == nil && ts.After(from.Add(-50*time.Millisecond)) && ts.Before(to.Add(50*time.Millisecond)) {
				out = append(out, fmt.Sprintf("n%d: %s", i+1, line))
			}
		}
	}
	return strings.Join(out, "\n")
}

// plannedRuns counts TestPlannedLeaderStop's runs (-count).
var plannedRuns atomic.Int64

// placeStreamLeader moves stream's leadership onto the meta leader
// (withMeta) or off it, and returns the index of its leader then.
func (c *cluster) placeStreamLeader(t *testing.T, stream string, withMeta bool) int {
	t.Helper()
	meta := c.metaLeader(t)
	leader := c.streamLeader(t, stream)
	want := meta
	if !withMeta {
		want = (meta + 1) % len(c.nodes)
	}
	if (leader == meta) == withMeta {
		t.Logf("the meta leader is n%d, %s's leader n%d", meta+1, stream, leader+1)
		return leader
	}
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	body := fmt.Sprintf(`{"placement":{"preferred":"n%d"}}`, want+1)
	await.For(t, 20*time.Second, func() error {
		if l := c.streamLeader(t, stream); l == want {
			return nil
		}
		_, err := js.Conn().Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, []byte(body), 5*time.Second)
		return fmt.Errorf("%s's leader is not n%d yet (step-down: %v)", stream, want+1, err)
	})
	t.Logf("the meta leader is n%d; %s's leadership moved from n%d to n%d", meta+1, stream, leader+1, want+1)
	return want
}

// metaLeader returns the index of the node whose metrics say it leads
// the meta group.
func (c *cluster) metaLeader(t *testing.T) int {
	t.Helper()
	leader := -1
	await.For(t, 20*time.Second, func() error {
		for i, n := range c.nodes {
			if metricOf(t, n, "rankwire_cluster_meta_leader") == "1" {
				leader = i
				return nil
			}
		}
		return fmt.Errorf("no node says it leads the meta group")
	})
	return leader
}

// handoffWriter submits through its gateways with the Go SDK, scores
// rising with every acknowledged submission, counting failed calls.
type handoffWriter struct {
	pausedWriter
	failed    atomic.Int64
	firstErr  error     // run's, read after it ended
	longestAt time.Time // run's: when the longest gap ended
	// stopAt is when the node was told to stop (Unix ns; zero: not yet),
	// longestAfter run's longest gap that ended after it.
	stopAt       atomic.Int64
	longestAfter time.Duration
	slow         [][2]time.Time // run's: the gaps over 100 ms after stopAt, start and end
	trace        *requestTrace  // every request the writer sent
}

func newHandoffWriter(t *testing.T, tok string, via []*clusterNode) *handoffWriter {
	w := &handoffWriter{pausedWriter: *newPausedWriter(t, tok, via), trace: &requestTrace{next: http.DefaultTransport}}
	var urls []string
	for _, n := range via {
		urls = append(urls, "http://"+n.p.addr)
	}
	c, err := client.New(urls, client.WithToken(tok), client.WithHTTPClient(&http.Client{Transport: w.trace}))
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	return w
}

// requestTrace is an http.RoundTripper that keeps every request it sends:
// the writer's attempts, for the timeline of a slow gap.
type requestTrace struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []tracedRequest
}

// tracedRequest is one request the writer sent and how it ended.
type tracedRequest struct {
	start, end time.Time
	host       string
	outcome    string
}

func (rt *requestTrace) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := rt.next.RoundTrip(r)
	outcome := ""
	if err != nil {
		outcome = err.Error()
	} else {
		outcome = resp.Status
	}
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, tracedRequest{start, time.Now(), r.URL.Host, outcome})
	rt.mu.Unlock()
	return resp, err
}

// between returns the requests that overlapped from..to, times relative
// to zero.
func (rt *requestTrace) between(from, to, zero time.Time) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []string
	for _, r := range rt.reqs {
		if r.end.Before(from) || r.start.After(to) {
			continue
		}
		out = append(out, fmt.Sprintf("  %v..%v %s: %s", r.start.Sub(zero).Round(time.Millisecond), r.end.Sub(zero).Round(time.Millisecond), r.host, r.outcome))
	}
	return strings.Join(out, "\n")
}

// dumpOnFail is a testing.TB whose Fatalf logs every node's last lines
// first: a survivor whose replica applied nothing says why there.
type dumpOnFail struct {
	testing.TB
	c *cluster
}

func (d dumpOnFail) Fatalf(format string, args ...any) {
	d.Helper()
	for i, n := range d.c.nodes {
		d.Logf("node n%d's log:\n%s", i+1, n.p.tail())
	}
	d.TB.Fatalf(format, args...)
}

// progressed fails until at least k submissions were acknowledged after at.
func (w *handoffWriter) progressed(at int64, k int64) error {
	if got := w.acked.Load() - at; got < k {
		return fmt.Errorf("%d acknowledged since, want %d", got, k)
	}
	return nil
}

// run submits until ctx ends, the same score again after a failed call
// (which it counts); the channel closes when it has.
func (w *handoffWriter) run(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.last = time.Now()
		for ctx.Err() == nil {
			err := w.submit(ctx)
			switch {
			case err == nil:
				gap := time.Since(w.last)
				if gap > w.longest {
					w.longest, w.longestAt = gap, time.Now()
				}
				if at := w.stopAt.Load(); at != 0 && time.Now().UnixNano() > at {
					w.longestAfter = max(w.longestAfter, gap)
					if gap > 100*time.Millisecond {
						w.slow = append(w.slow, [2]time.Time{w.last, time.Now()})
					}
				}
				w.last = time.Now()
			case ctx.Err() == nil:
				if w.failed.Add(1) == 1 {
					w.firstErr = err
				}
			}
		}
	}()
	return done
}

// holdsAcked fails until node n's board b holds at least k members.
func holdsAcked(n *clusterNode, tok string, k int) error {
	var pg topPage
	if status, err := call("GET", n.p.url("/v1/boards/b/top?limit=1000"), tok, "", &pg); status != 200 || err != nil {
		return fmt.Errorf("top: %d %v", status, err)
	}
	if pg.Total < k {
		return fmt.Errorf("%d members, want %d", pg.Total, k)
	}
	return nil
}

// sigterm sends n SIGTERM and returns how long it took to exit, failing
// the test after 20 s or on an unclean exit.
func sigterm(t *testing.T, n *clusterNode) time.Duration {
	t.Helper()
	took, err := sigtermErr(n)
	if err != nil {
		t.Fatal(err)
	}
	return took
}

// sigtermErr sends n SIGTERM and returns how long it took to exit, or why
// it did not exit cleanly within 20 s. Safe from any goroutine.
func sigtermErr(n *clusterNode) (time.Duration, error) {
	return sigtermWithin(n.p, 20*time.Second)
}

// stopAllWithin sends every node SIGTERM at once and fails unless each
// exits cleanly within d.
func stopAllWithin(t *testing.T, ns []*clusterNode, d time.Duration) {
	t.Helper()
	took := make([]time.Duration, len(ns))
	errs := make([]error, len(ns))
	var wg sync.WaitGroup
	for i, n := range ns {
		wg.Go(func() { took[i], errs[i] = sigtermErr(n) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d nodes stopped together, each after: %v", len(ns), took)
	for i, d0 := range took {
		if d0 > d {
			t.Errorf("node %d took %v to stop, want under %v", i+1, d0, d)
		}
	}
}

// settled waits until every node has opened the shared snapshot bucket: a
// cluster that has (a planned stop's cluster) has its streams placed.
func settled(t *testing.T, c *cluster) {
	t.Helper()
	opened := regexp.MustCompile(`snapshots shared through the bucket`)
	for i, n := range c.nodes {
		await.For(t, 30*time.Second, func() error {
			if len(n.p.logged(opened)) == 0 {
				return fmt.Errorf("node %d has not opened the snapshot bucket", i+1)
			}
			return nil
		})
	}
}

// tail returns the last 400 lines of p's log.
func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log[max(0, len(p.log)-400):], "\n")
}
