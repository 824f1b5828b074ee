package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/wire"
)

// Where the failpoint perturbs the victim's copy of t1 (the stream
// sequence after whose apply it changes a score in memory) and where the
// cluster next compares checkpoints (RANKWIRE_FINGERPRINT_EVERY=10).
const (
	perturbAt  = 15
	detectedAt = 20
	phantom    = 1e6 // m3's score there: the top of the board, in every watcher's top 10
)

// TestDivergenceCaughtAndRebuilt runs three gateway processes built with
// the test build's failpoints (internal/failpoint) and has one of them,
// the victim, change one score of tenant t1 in its memory while it runs
// (after applying seq 15: member m3's score of 3 becomes 1,000,000 there,
// the top of the board, and nowhere else: not in the stream, not on disk). It checks, end to end: the
// victim serves the wrong score until the next checkpoint (seq 20), where
// the cluster catches the divergence; from then on, until its rebuild
// (held by the failpoint until the test sends SIGUSR1, so that the test
// sees it for as long as it looks), the victim refuses t1's reads, writes
// and new subscriptions with the documented 503 (unavailable) naming the
// sequence, /readyz answers 503 with the rebuilding reason, the metrics
// count the divergence and the rebuild, and its log says so; it then
// rebuilds, and answers t1's standings byte for byte as the two others
// do, and agrees at the checkpoint after. Tenant t2, with the same board,
// members and scores on the same node, is served throughout and never
// diverges (the twin); no acknowledged submission of either is lost.
func TestDivergenceCaughtAndRebuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	keys, tok1, tok2 := twoTenantKeys(t)
	c := startClusterWith(t, 3, func(c *cluster) {
		c.argv = []string{failpointGateway(t)}
		c.keys, c.tok = keys, tok1
		c.nodeEnv = map[int][]string{2: {fmt.Sprintf("RANKWIRE_FAILPOINT_DIVERGE=t1/b/m3=%v@%d", phantom, perturbAt), "RANKWIRE_FAILPOINT_HOLD_REBUILD=t1"}}
	}, "RANKWIRE_FINGERPRINT_EVERY=10")
	r := &divergenceRun{t: t, c: c, victim: c.nodes[2], healthy: c.nodes[:2],
		t1: &tenantWriter{name: "t1", tok: tok1}, t2: &tenantWriter{name: "t2", tok: tok2}}
	r.open()
	r.perturbed()
	r.detected()
	r.rebuilt()
	r.agreesAfter()
}

// divergenceRun is TestDivergenceCaughtAndRebuilt's cluster, its victim
// (n3, whose failpoint perturbs t1), the two tenants' writers and what
// watches the victim.
type divergenceRun struct {
	t              *testing.T
	c              *cluster
	victim         *clusterNode
	healthy        []*clusterNode
	t1, t2         *tenantWriter
	watch1, watch2 *watch      // t1's and t2's top 10 through the victim
	shares         *shareWatch // every node's checkpoints and every snapshot shared
	lag            uint64      // t1's stream seq less its board's seq: the events that changed no board
}

// open creates both tenants' board b, opens them on every node (the
// victim first) with a submission through each, and starts the watches.
func (r *divergenceRun) open() {
	t := r.t
	for _, w := range []*tenantWriter{r.t1, r.t2} {
		await.For(t, 30*time.Second, func() error { // creates the stream: may outlast one call's budget on a loaded box
			if status, err := call("PUT", r.healthy[0].p.url("/v1/boards/b"), w.tok, `{"policy":"latest"}`, nil); status != 200 {
				return fmt.Errorf("create %s's board: %d %v", w.name, status, err)
			}
			return nil
		})
		for _, n := range []*clusterNode{r.victim, r.healthy[0], r.healthy[1]} {
			await.For(t, 30*time.Second, func() error { _, err := w.submit(n); return err })
		}
	}
	r.watch1, r.watch2 = startWatch(t, r.victim, r.t1.tok), startWatch(t, r.victim, r.t2.tok)
	r.shares = watchShares(t, r.c, r.healthy[0])
	// The board's seq is the stream's of its last change.
	if r.lag = streamLast(t, r.c, "t1") - r.t1.last; r.t1.last+r.lag >= perturbAt {
		t.Fatalf("the setup took %d events: past the failpoint's seq %d", r.t1.last+r.lag, perturbAt)
	}
}

// perturbed writes both tenants up to seq 19 through the healthy nodes:
// the victim's t1 holds m3 = 1,000,000 from seq 15, served and pushed to
// its watcher, which no checkpoint compared yet; its t2 is right.
func (r *divergenceRun) perturbed() {
	t := r.t
	for r.t1.last+r.lag < detectedAt-1 {
		r.t1.mustSubmit(t, r.healthy[r.t1.last%2])
		r.t2.mustSubmit(t, r.healthy[r.t1.last%2])
	}
	if last := streamLast(t, r.c, "t1"); last != detectedAt-1 {
		t.Fatalf("t1's stream at seq %d, want %d: a submission took more than one event", last, detectedAt-1)
	}
	var right, wrong topPage
	if err := json.Unmarshal(sameRaw(t, r.healthy, r.t1.tok), &right); err != nil {
		t.Fatal(err)
	}
	await.For(t, 20*time.Second, func() error {
		status, body := rawCall(t, "GET", r.victim.p.url("/v1/boards/b/top?limit=1000"), r.t1.tok, "")
		if wrong = (topPage{}); status == 200 {
			_ = json.Unmarshal([]byte(body), &wrong)
		}
		if _, ok := wrong.score(fmt.Sprint("m", len(r.t1.acked)-1)); status != 200 || !ok {
			return fmt.Errorf("the victim's t1 lacks the last submission: %d %s", status, body)
		}
		return nil
	})
	if score, ok := wrong.score("m3"); !ok || score != phantom || right.Rows[0].Member == "m3" {
		t.Fatalf("the failpoint changed nothing on the victim (m3 %v %v): the test proves nothing; its failpoint lines %q",
			score, ok, r.victim.p.logged(regexp.MustCompile(`failpoint`)))
	}
	awaitLogged(t, r.victim, `failpoint: this node's state of the tenant perturbed in memory.* tenant=t1 seq=15 `)
	awaitView(t, r.watch1, r.victim, r.t1.tok) // the wrong top: nothing compared it yet
	if got := sameRaw(t, r.c.nodes, r.t2.tok); !bytes.Contains(got, []byte(`"member":"m3","score":3,`)) {
		t.Fatalf("the twin t2 is not what was written: %s", got)
	}
	if v := metricOf(t, r.victim, "rankwire_divergence_detected_total"); v != "0" {
		t.Fatalf("a divergence counted before any checkpoint after the perturbation: %v", v)
	}
}

// detected writes seq 20, a checkpoint, where the victim's t1 differs from
// the two others': it says so and refuses t1 (refusing) while its rebuild
// is held; the two others take t1's writes meanwhile.
func (r *divergenceRun) detected() {
	t := r.t
	r.t1.mustSubmit(t, r.healthy[0])
	r.t2.mustSubmit(t, r.healthy[0])
	awaitLogged(t, r.victim, fmt.Sprintf(`level=ERROR msg="fingerprint: this node's copy of the tenant differs from the majority's.* tenant=t1 seq=%d `, detectedAt))
	awaitLogged(t, r.victim, fmt.Sprintf(`level=ERROR msg="hub: this node's copy of the tenant diverged from the cluster's.* tenant=t1 seq=%d`, detectedAt))
	awaitLogged(t, r.victim, `failpoint: the rebuild waits for SIGUSR1.* tenant=t1`)
	r.shares.awaitCheckpoint(t, detectedAt, false)
	refusing(t, r.c, r.victim, r.t1, r.t2)
	// Its watchers there are told: t1's heartbeats say writable false (the
	// clients move: docs/PROTOCOL.md, "Heartbeats"), the twin's true.
	awaitBeat(t, r.watch1, false)
	awaitBeat(t, r.watch2, true)
	for range 3 {
		r.t1.mustSubmit(t, r.healthy[len(r.t1.acked)%2])
	}
}

// rebuilt releases the victim's rebuild: it serves t1 again, byte for byte
// as the others, with every acknowledged submission.
func (r *divergenceRun) rebuilt() {
	t := r.t
	if err := r.victim.p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	awaitLogged(t, r.victim, `hub: tenant rebuilt from the stream: serving it again.* tenant=t1`)
	awaitReadyz(t, r.victim, http.StatusOK, 30*time.Second)
	awaitBeat(t, r.watch1, true)
	if v := metricOf(t, r.victim, "rankwire_divergence_rebuilding"); v != "0" {
		t.Fatalf("rankwire_divergence_rebuilding %v after the rebuild, want 0", v)
	}
	rebuilt := sameRaw(t, r.c.nodes, r.t1.tok)
	t.Logf("rebuilt: the victim's t1 is byte for byte the majority's (%d bytes)", len(rebuilt))
	for _, n := range r.c.nodes {
		haveEveryAcked(t, n, r.t1.tok, r.t1.acked)
	}
}

// agreesAfter writes past the next checkpoint (seq 30) through every node:
// the victim's copy agrees there, its watch of t1 shows the majority's
// standings, one divergence in all, and the bucket took only snapshots the
// majority agreed with.
func (r *divergenceRun) agreesAfter() {
	t := r.t
	for r.t1.last+r.lag < detectedAt+11 {
		r.t1.mustSubmit(t, r.c.nodes[len(r.t1.acked)%3])
		r.t2.mustSubmit(t, r.c.nodes[len(r.t2.acked)%3])
	}
	sameRaw(t, r.c.nodes, r.t1.tok)
	sameRaw(t, r.c.nodes, r.t2.tok)
	r.shares.awaitCheckpoint(t, detectedAt+10, true)
	awaitView(t, r.watch1, r.victim, r.t1.tok)
	awaitView(t, r.watch2, r.victim, r.t2.tok)
	diverged := regexp.MustCompile(`level=ERROR.*(differs from the majority|diverged from the cluster's)`)
	for _, n := range r.c.nodes {
		haveEveryAcked(t, n, r.t1.tok, r.t1.acked)
		haveEveryAcked(t, n, r.t2.tok, r.t2.acked)
		want, lines := "0", 0
		if n == r.victim {
			want, lines = "1", 2 // cmd/gateway's and hub's
		}
		if v := metricOf(t, n, "rankwire_divergence_detected_total"); v != want {
			t.Fatalf("rankwire_divergence_detected_total %s on %s, want %s", v, n.p.addr, want)
		}
		if got := n.p.logged(diverged); len(got) != lines {
			t.Fatalf("divergences logged on %s, want the victim's one at seq %d only: %q", n.p.addr, detectedAt, got)
		}
	}
	r.shares.check(t) // the diverged node shared nothing the majority did not agree with
}

// awaitCheckpoint waits until the three nodes reported their checkpoint
// of t1 at seq, and fails unless n3's agrees with n1's and n2's as agree
// says.
func (w *shareWatch) awaitCheckpoint(t *testing.T, seq uint64, agree bool) {
	t.Helper()
	await.For(t, 20*time.Second, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		got := w.reports[checkpointOf{"t1", seq}]
		if len(got) < 3 {
			return fmt.Errorf("%d nodes reported their checkpoint at seq %d", len(got), seq)
		}
		if got["n1"] != got["n2"] {
			return fmt.Errorf("n1 and n2 differ at seq %d", seq)
		}
		if agree != (got["n3"] == got["n1"]) {
			return fmt.Errorf("n3 agrees %v at seq %d, want %v", !agree, seq, agree)
		}
		return nil
	})
}

// refusing checks the victim while it holds t1's rebuild: t1's reads,
// writes and new subscriptions answer 503 unavailable naming the
// checkpoint, /readyz says why, the metrics count it; t2 is served, its
// writes taken and pushed to its watcher there.
func refusing(t *testing.T, c *cluster, victim *clusterNode, t1, t2 *tenantWriter) {
	t.Helper()
	const why = "this node's copy of the tenant diverged from the cluster's at seq 20 and is being rebuilt; ask another node"
	status, body := rawCall(t, "GET", victim.p.url("/v1/boards/b/top?limit=1000"), t1.tok, "")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"unavailable"`) || !strings.Contains(body, why) {
		t.Fatalf("a read of t1 on the diverged node: %d %s", status, body)
	}
	status, body = rawCall(t, "POST", victim.p.url("/v1/boards/b/scores"), t1.tok, `{"id":"refused","member":"refused","score":1}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, why) {
		t.Fatalf("a write of t1 on the diverged node: %d %s", status, body)
	}
	if code, msg := subscribeRefusal(t, victim, t1.tok); code != wire.CodeUnavailable || !strings.Contains(msg, why) {
		t.Fatalf("a subscription to t1 on the diverged node: %s %q", code, msg)
	}
	if reason := awaitReadyz(t, victim, http.StatusServiceUnavailable, 20*time.Second); !strings.Contains(reason, "1 tenants rebuilding: their copy here diverged from the cluster's") {
		t.Fatalf("/readyz of the diverged node: %q", reason)
	}
	for _, name := range []string{"rankwire_divergence_detected_total", "rankwire_divergence_rebuilding"} {
		if v := metricOf(t, victim, name); v != "1" {
			t.Fatalf("%s %s on the diverged node, want 1", name, v)
		}
	}
	// The twin, on the same node: read, written, pushed.
	sameRaw(t, c.nodes, t2.tok)
	t2.mustSubmit(t, victim)
	awaitView(t, startWatch(t, victim, t2.tok), victim, t2.tok)
	t.Logf("the diverged node refuses t1 (%q) and serves t2", why)
}

// tenantWriter writes to one tenant's board b: submission i is member
// m<i> with score i and id s<i>.
type tenantWriter struct {
	name, tok string
	acked     []int
	last      uint64 // the seq the last acknowledged submission answered
}

// submit sends the next submission through n.
func (w *tenantWriter) submit(n *clusterNode) (uint64, error) {
	i := len(w.acked)
	var res wire.Results
	body := fmt.Sprintf(`{"id":"s%d","member":"m%d","score":%d}`, i, i, i)
	if status, err := call("POST", n.p.url("/v1/boards/b/scores"), w.tok, body, &res); status != 200 || err != nil || len(res.Results) != 1 {
		return 0, fmt.Errorf("%s: submit %d through %s: %d %v", w.name, i, n.p.addr, status, err)
	}
	w.acked, w.last = append(w.acked, i), res.Results[0].Seq
	return w.last, nil
}

// mustSubmit is submit failing the test: no retry, so that each one is
// exactly one event of the stream.
func (w *tenantWriter) mustSubmit(t *testing.T, n *clusterNode) uint64 {
	t.Helper()
	seq, err := w.submit(n)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func (pg topPage) score(member string) (float64, bool) {
	for _, r := range pg.Rows {
		if r.Member == member {
			return r.Score, true
		}
	}
	return 0, false
}

// streamLast returns the last sequence of tenant's stream.
func streamLast(t *testing.T, c *cluster, tenant string) uint64 {
	t.Helper()
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, hub.StreamOf(tenant))
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

// rawCall sends a request and returns the status and body.
func rawCall(t *testing.T, method, url, tok, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

// sameRaw waits until every node answers the top 1,000 of the token's
// board b with the same bytes, and returns them.
func sameRaw(t *testing.T, ns []*clusterNode, tok string) []byte {
	t.Helper()
	var got []byte
	await.For(t, 20*time.Second, func() error {
		var first string
		for i, n := range ns {
			status, body := rawCall(t, "GET", n.p.url("/v1/boards/b/top?limit=1000"), tok, "")
			if status != 200 {
				return fmt.Errorf("node %s: %d %s", n.p.addr, status, body)
			}
			if i == 0 {
				first = body
			} else if body != first {
				return fmt.Errorf("node %s answers\n%s\nnode %s\n%s", n.p.addr, body, ns[0].p.addr, first)
			}
		}
		got = []byte(first)
		return nil
	})
	return got
}

// awaitLogged waits up to 30 s for a line of n's log that matches re.
func awaitLogged(t *testing.T, n *clusterNode, re string) {
	t.Helper()
	m := regexp.MustCompile(re)
	await.For(t, 30*time.Second, func() error {
		if len(n.p.logged(m)) == 0 {
			return fmt.Errorf("no log line matches %q", re)
		}
		return nil
	})
}

// subscribeRefusal subscribes to board b's top 10 through n and returns
// the code and message of the error that answers it; it fails the test
// where a snapshot comes instead.
func subscribeRefusal(t *testing.T, n *clusterNode, tok string) (wire.Code, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+n.p.addr+"/v1/ws?access_token="+tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	sub := map[string]any{"type": "subscribe", "id": "r", "board": "b", "view": map[string]any{"kind": "top", "limit": 10}}
	if err := wsjson.Write(ctx, ws, sub); err != nil {
		t.Fatal(err)
	}
	for {
		var m wire.ErrorMessage
		if err := wsjson.Read(ctx, ws, &m); err != nil {
			t.Fatalf("no answer to the subscription: %v", err)
		}
		switch m.Type {
		case wire.TypeError:
			return m.Code, m.Message
		case "snapshot", "diff":
			t.Fatalf("the subscription was served a %s", m.Type)
		}
	}
}

// awaitBeat waits, up to 15 s, for a heartbeat on w saying writable as
// given, counted from the one w last got (every 2 s by default).
func awaitBeat(t *testing.T, w *watch, writable bool) {
	t.Helper()
	w.view.mu.Lock()
	from := len(w.view.beats)
	w.view.mu.Unlock()
	await.For(t, 15*time.Second, func() error {
		w.view.mu.Lock()
		defer w.view.mu.Unlock()
		if slices.Contains(w.view.beats[from:], writable) {
			return nil
		}
		return fmt.Errorf("no heartbeat saying writable %v among the %d since", writable, len(w.view.beats)-from)
	})
}

// awaitView waits until w's top 10 is n's.
func awaitView(t *testing.T, w *watch, n *clusterNode, tok string) {
	t.Helper()
	await.For(t, 20*time.Second, func() error {
		var pg topPage
		if status, err := call("GET", n.p.url("/v1/boards/b/top?limit=10"), tok, "", &pg); status != 200 || err != nil {
			return fmt.Errorf("top: %d %v", status, err)
		}
		w.view.mu.Lock()
		defer w.view.mu.Unlock()
		if w.view.broken != nil {
			t.Fatalf("the prev chain broke: %v", w.view.broken)
		}
		for i, r := range pg.Rows {
			if got, want := w.view.rows[i+1], fmt.Sprintf("%s:%v", r.Member, r.Score); got != want {
				return fmt.Errorf("the view's rank %d is %q, the node's %q (view at seq %d, node at %d)", i+1, got, want, w.view.seq, pg.Seq)
			}
		}
		if len(w.view.rows) != len(pg.Rows) {
			return fmt.Errorf("the view holds %d rows, the node's top %d", len(w.view.rows), len(pg.Rows))
		}
		return nil
	})
}
