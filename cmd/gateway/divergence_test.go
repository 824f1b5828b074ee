package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
)

// TestCorruptFileNeverServed corrupts a minority node's snapshot file
// where no checksum sees it (it holds a submission the stream never had,
// with a valid CRC: the shape of a bit flipped in memory before the write,
// or of whoever changed the file) and removes the cluster's agreed shared
// snapshot, so that nothing vouches for the file: the restarted node must
// not load it (a clustered node opens only from a state a checkpoint the
// majority agreed with vouches for, else replays its stream: snapbucket's
// Vouched). It never answers the corrupted standing, from its first
// answer on, ends equal to the majority with every acknowledged
// submission, and never diverges at the checkpoints after. Every snapshot
// the cluster's bucket received meanwhile is one the majority agreed with.
func TestCorruptFileNeverServed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startCluster(t, 3, "RANKWIRE_FINGERPRINT_EVERY=10")
	nodes, tok := c.nodes, c.tok
	await.For(t, 30*time.Second, func() error { // creates the stream: may outlast one call's budget on a loaded box
		if status, err := call("PUT", nodes[0].p.url("/v1/boards/b"), tok, `{"policy":"latest"}`, nil); status != 200 {
			return fmt.Errorf("create board: %d %v", status, err)
		}
		return nil
	})
	next, acked := 0, []int(nil)
	submit := func(n *clusterNode) error {
		body := fmt.Sprintf(`{"id":"s%d","member":"m%d","score":%d}`, next, next, next)
		if status, err := call("POST", n.p.url("/v1/boards/b/scores"), tok, body, nil); status != 200 {
			return fmt.Errorf("submit %d: %d %v", next, status, err)
		}
		acked = append(acked, next)
		next++
		return nil
	}
	for _, n := range nodes { // the tenant reaches every node (their discovery)
		await.For(t, 30*time.Second, func() error { return submit(n) })
	}
	shares := watchShares(t, c, nodes[0])
	var pg topPage
	// Up to a sequence just past a checkpoint (every 10): the 5 writes
	// while the victim is stopped then pass none.
	for i := 0; i < 15 || pg.Seq%10 != 1; i++ {
		if err := submit(nodes[1]); err != nil {
			t.Fatal(err)
		}
		await.For(t, 20*time.Second, func() error { return samePages(nodes, tok, &pg) })
	}

	// The checkpoint just passed is shared once a majority agreed: wait
	// for it, so that no upload of it lands after removeShared below.
	shares.awaitLatest(t)
	victim := nodes[2]
	stopGracefully(t, victim) // writes its snapshot
	corruptSnapshot(t, victim, "t1", "b")
	for range 5 { // the two others go on
		if err := submit(nodes[0]); err != nil {
			t.Fatal(err)
		}
	}
	// A clustered node restarts from the agreed shared snapshot where
	// there is one (hub's TestRestartPrefersAgreedShared); without one,
	// nothing vouches for its file, and it replays the stream.
	removeShared(t, c, nodes[0], "t1")
	victim.wait(t, victim.launch(t))

	// No answer of the victim holds the corruption, from its first on,
	// until it serves what the others do.
	var wrong string
	await.For(t, 20*time.Second, func() error {
		var vp topPage
		if status, err := call("GET", victim.p.url("/v1/boards/b/top?limit=1000"), tok, "", &vp); status == 200 && err == nil && strings.Contains(vp.String(), "cheat") {
			wrong = vp.String()
			return nil
		}
		return samePages(nodes, tok, &pg)
	})
	if wrong != "" || strings.Contains(pg.String(), "cheat") {
		t.Fatalf("the corrupted file was served: %v %v", wrong, pg)
	}
	// Its file is vouched for by nothing agreed: it replays the stream, or
	// loads a shared snapshot a majority agreed with after removeShared.
	replayed := len(victim.p.logged(regexp.MustCompile(`snapshot ignored, replaying the whole stream`)))
	shared := len(victim.p.logged(regexp.MustCompile(`loaded the shared snapshot" tenant=t1`)))
	if replayed+shared == 0 {
		t.Fatalf("the victim opened t1 neither by a replay nor from an agreed shared snapshot; its snapshot lines %q",
			victim.p.logged(regexp.MustCompile(`snapshot`)))
	}
	haveEveryAcked(t, victim, tok, acked)
	for range 25 { // two more checkpoints: the victim's copy agrees
		if err := submit(nodes[next%2]); err != nil {
			t.Fatal(err)
		}
	}
	await.For(t, 20*time.Second, func() error { return samePages(nodes, tok, &pg) })
	if strings.Contains(pg.String(), "cheat") {
		t.Fatalf("the corrupted file was served: %v", pg)
	}
	if n := len(victim.p.logged(regexp.MustCompile(`differs from the majority`))); n != 0 {
		t.Fatalf("the victim diverged %d times: it served its corrupted file", n)
	}
	haveEveryAcked(t, victim, tok, acked)
	shares.check(t)
}

// removeShared deletes tenant's object from the snapshot bucket.
func removeShared(t *testing.T, c *cluster, n *clusterNode, tenant string) {
	t.Helper()
	js, done := c.jetStream(t, n)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := js.ObjectStore(ctx, "rankwire_snapshots")
	if err == nil {
		err = store.Delete(ctx, tenant)
	}
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) { // none shared yet: nothing to remove
		t.Fatalf("removing the shared snapshot: %v", err)
	}
}

// awaitLatest waits, up to 10 s (a node's saver waits up to 5 s for the
// majority's verdict, then uploads), until the bucket took a snapshot at
// the latest checkpoint any node reported; it only logs where none came
// (a checkpoint without a verdict, or before the node's bucket opened, is
// not shared).
func (w *shareWatch) awaitLatest(t *testing.T) {
	t.Helper()
	err := await.Until(10*time.Second, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		var latest checkpointOf
		for c := range w.reports {
			if c.seq > latest.seq {
				latest = c
			}
		}
		var seqs []string
		for _, info := range w.shared {
			if info.Name == latest.tenant && info.Metadata["seq"] == strconv.FormatUint(latest.seq, 10) {
				return nil
			}
			seqs = append(seqs, info.Metadata["seq"])
		}
		return fmt.Errorf("no snapshot shared at checkpoint %d of %s within 10 s (shared so far at %v)", latest.seq, latest.tenant, seqs)
	})
	if err != nil {
		t.Log(err)
	}
}

// shareWatch records, over the cluster's own NATS, every node's checkpoint
// reports and every snapshot stored in the shared bucket.
type shareWatch struct {
	mu      sync.Mutex
	reports map[checkpointOf]map[string]fingerprint.Sum // node -> sum
	shared  []jetstream.ObjectInfo
}

// checkpointOf names one checkpoint of one tenant.
type checkpointOf struct {
	tenant string
	seq    uint64
}

// watchShares subscribes through n to the reports and the bucket's object
// infos until the test ends.
func watchShares(t *testing.T, c *cluster, n *clusterNode) *shareWatch {
	t.Helper()
	secret, err := readSecret(c.secret)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(c.natsURL(t, n), nats.UserInfo(hub.ClientUser, hub.ClientPassword(secret)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w := &shareWatch{reports: map[checkpointOf]map[string]fingerprint.Sum{}}
	if _, err := nc.Subscribe(fingerprintSubject, w.report); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("$O.rankwire_snapshots.M.>", w.info); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *shareWatch) report(m *nats.Msg) {
	r, err := fingerprint.ParseReport(m.Data)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c := checkpointOf{r.Tenant, r.Seq}
	if w.reports[c] == nil {
		w.reports[c] = map[string]fingerprint.Sum{}
	}
	w.reports[c][r.Node] = r.Sum
}

func (w *shareWatch) info(m *nats.Msg) {
	var info jetstream.ObjectInfo
	if json.Unmarshal(m.Data, &info) == nil && !info.Deleted {
		w.mu.Lock()
		w.shared = append(w.shared, info)
		w.mu.Unlock()
	}
}

// check fails the test unless at least one snapshot was shared and every
// one was marked agreed and named the checkpoint at least two of the three
// nodes reported at its sequence.
func (w *shareWatch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.shared) == 0 {
		t.Fatal("no snapshot was shared while the test ran: the check proves nothing")
	}
	for _, info := range w.shared {
		seq, _ := strconv.ParseUint(info.Metadata["seq"], 10, 64)
		votes := 0
		for _, sum := range w.reports[checkpointOf{info.Name, seq}] {
			if fmt.Sprintf("%x", sum[:]) == info.Metadata["sum"] {
				votes++
			}
		}
		if info.Metadata["agreed"] != "majority" || votes < 2 {
			t.Fatalf("the bucket took a snapshot of %s at seq %d (agreed %q) that %d nodes reported: %v", info.Name, seq, info.Metadata["agreed"], votes, w.reports[checkpointOf{info.Name, seq}])
		}
	}
	t.Logf("%d snapshots shared, each the majority's checkpoint", len(w.shared))
}

// stopGracefully stops n with SIGTERM and fails the test unless it exits
// within stopBound (its exit status is not checked).
func stopGracefully(t *testing.T, n *clusterNode) {
	t.Helper()
	if _, err := sigtermWithin(n.p, stopBound); errors.Is(err, errHung) {
		t.Fatal(err)
	}
}

// corruptSnapshot rewrites n's snapshot of tenant so that it holds one
// more member on board, at the same sequence, with a valid checksum.
func corruptSnapshot(t *testing.T, n *clusterNode, tenant, board string) {
	t.Helper()
	var dir string
	for _, e := range n.env {
		if v, ok := strings.CutPrefix(e, "RANKWIRE_DATA="); ok {
			dir = v
		}
	}
	path := filepath.Join(dir, "snapshots", tenant+".snap")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := &ledger.Event{Kind: ledger.EvSubmit, Board: board, Items: []ledger.Item{{Member: "cheat", Score: 1e9}}}
	ev.Prepare()
	if out := st.Apply(st.Seq(), ev); out.Err != nil {
		t.Fatal(out.Err)
	}
	if data, err = st.Encode(nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// --routes names every node, its own included, once each: the members.
func TestClusterMembers(t *testing.T) {
	for routes, want := range map[string]int{
		"nats://a:6222,nats://b:6222,nats://c:6222":               3,
		"nats://a:6222,nats://b:6222,nats://c:6222,nats://a:6222": 3,
		"": 1,
	} {
		if got := clusterMembers(splitList(routes)); got != want {
			t.Errorf("%q: %d members, want %d", routes, got, want)
		}
	}
}

// The node's own checkpoint against two others that agree with each other
// is a divergence, found once however many reports repeat it; one that
// agrees, or one against one, is none.
func TestDivergenceJudgesOnce(t *testing.T) {
	d := newDivergence(Config{Cluster: "c", Node: "n1", Routes: splitList("nats://a:1,nats://b:1,nats://c:1")}, slog.New(slog.DiscardHandler))
	good, bad := fingerprint.Sum{1}, fingerprint.Sum{2}
	rep := func(node string, seq uint64, s fingerprint.Sum) fingerprint.Report {
		return fingerprint.Report{Node: node, Tenant: "t1", Checkpoint: fingerprint.Checkpoint{Seq: seq, Sum: s}}
	}
	d.record(rep("n1", 10, bad))
	d.record(rep("n2", 10, good))
	if d.detected.Load() != 0 {
		t.Fatal("one against one decided")
	}
	d.record(rep("n3", 10, good))
	d.record(rep("n3", 10, good))
	if d.detected.Load() != 1 {
		t.Fatalf("detected %d, want 1", d.detected.Load())
	}
	if d.pending["t1"] != 10 { // no hub holds t1 open: it is handed over again until one does
		t.Fatalf("pending %v, want t1 at 10", d.pending)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		d.record(rep(n, 20, good))
	}
	if d.detected.Load() != 1 {
		t.Fatalf("an agreeing checkpoint counted: %d", d.detected.Load())
	}
}

// A tenant none of whose nodes reported for tallyIdle is dropped at the
// next sweep (a deleted tenant, or one whose last reports name a node that
// left), one that reported within it is kept, and a tenant that reports
// again after the sweep is judged afresh.
func TestDivergenceSweepsIdleTenants(t *testing.T) {
	d := newDivergence(Config{Cluster: "c", Node: "n1", Routes: splitList("nats://a:1,nats://b:1,nats://c:1")}, slog.New(slog.DiscardHandler))
	clock := time.Unix(1_800_000_000, 0)
	d.now = func() time.Time { return clock }
	good, bad := fingerprint.Sum{1}, fingerprint.Sum{2}
	rep := func(node, tenant string, seq uint64, s fingerprint.Sum) fingerprint.Report {
		return fingerprint.Report{Node: node, Tenant: tenant, Checkpoint: fingerprint.Checkpoint{Seq: seq, Sum: s}}
	}
	d.record(rep("gone", "deleted", 10, good))
	d.record(rep("n2", "busy", 10, good))
	clock = clock.Add(tallyIdle / 2)
	d.record(rep("n2", "busy", 20, good))
	clock = clock.Add(tallyIdle/2 + time.Second)
	d.sweep()
	if _, ok := d.tenants["deleted"]; ok {
		t.Fatalf("a tenant idle for %v was kept", tallyIdle+time.Second)
	}
	if _, ok := d.tenants["busy"]; !ok {
		t.Fatalf("a tenant that reported %v ago was dropped", tallyIdle/2+time.Second)
	}
	d.pending["busy"] = 20 // as record leaves a divergence no hub took: dropped with its tally
	clock = clock.Add(tallyIdle)
	d.sweep()
	if len(d.tenants) != 0 || len(d.pending) != 0 {
		t.Fatalf("%d tenants and %d divergences kept after all went idle", len(d.tenants), len(d.pending))
	}
	for _, r := range []fingerprint.Report{rep("n1", "busy", 30, bad), rep("n2", "busy", 30, good), rep("n3", "busy", 30, good)} {
		d.record(r)
	}
	if d.detected.Load() != 1 {
		t.Fatalf("a tenant back after the sweep: detected %d, want 1", d.detected.Load())
	}
}
