package hub

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

func TestSnapshotRestart(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(date(2026, 2, 1))
	a := startHub(t, Config{DataDir: dir, Now: clk.now, SnapshotEvery: 25})
	feed(t, a, clk, 7, 60)
	want := fingerprint(t, a, "t1")
	a.Close()

	snap := filepath.Join(dir, "snapshots", "t1.snap")
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatalf("no snapshot after Close: %v", err)
	}
	st, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := st.Encode(nil)
	if !bytes.Equal(again, data) {
		t.Fatal("snapshot does not round-trip byte for byte")
	}
	b := startHub(t, Config{DataDir: dir, Now: clk.now, SnapshotEvery: 25})
	if got := fingerprint(t, b, "t1"); !bytes.Equal(got, want) {
		t.Fatal("state after restart from snapshot differs")
	}
	feed(t, b, clk, 8, 30) // the tail after the snapshot
	want = fingerprint(t, b, "t1")
	seen := b.reg.lookup("t1").st.KeptIDs("s")
	b.Close()

	data[len(data)/2] ^= 0xff // corrupt: ignored, the whole stream replays
	if err := os.WriteFile(snap, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startHub(t, Config{DataDir: dir, SnapshotEvery: -1})
	if got := fingerprint(t, c, "t1"); !bytes.Equal(got, want) {
		t.Fatal("full replay differs from the snapshot-plus-tail state")
	}
	if got := c.reg.lookup("t1").st.KeptIDs("s"); got != seen || seen == 0 {
		t.Fatalf("seen ids after replay %d, want %d", got, seen)
	}
}

// TestStaleSnapshotTempRemoved: a temp file left by a save that a kill -9
// interrupted is gone after the next start; the snapshot itself and other
// files stay.
func TestStaleSnapshotTempRemoved(t *testing.T) {
	dir := t.TempDir()
	a := startHub(t, Config{DataDir: dir})
	mustPut(t, a, "t1", "b", Settings{})
	a.Close()
	snaps := filepath.Join(dir, "snapshots")
	stale := []string{"t1.snap.123456", "t2.snap.9"}
	keep := []string{"t1.snap", "notes.txt"}
	for _, name := range append(stale, keep[1:]...) {
		if err := os.WriteFile(filepath.Join(snaps, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := startHub(t, Config{DataDir: dir})
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(snaps, name)); !os.IsNotExist(err) {
			t.Errorf("%s still there after start: %v", name, err)
		}
	}
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(snaps, name)); err != nil {
			t.Errorf("%s removed: %v", name, err)
		}
	}
	if got := top(t, b, Loc{Tenant: "t1", Board: "b"}); len(got) != 0 {
		t.Errorf("board after restart: %v", got)
	}
}

func TestSnapshotCorrupt(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("RWSNAP1\n\x00\x00\x00\x00"), []byte("garbage that is long enough")} {
		if _, err := ledger.Decode(data, nil); err == nil {
			t.Errorf("ledger.Decode(%q, nil) succeeded", data)
		}
	}
}

// TestSnapshotInterval: a tenant whose state changes gets a snapshot once
// SnapshotInterval has passed, however few events it applied, written by
// the saver goroutine.
func TestSnapshotInterval(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, Config{DataDir: dir, SnapshotEvery: 1 << 30, SnapshotInterval: time.Millisecond})
	mustPut(t, h, "t1", "b", Settings{})
	r := h.reg.lookup("t1")
	checkFor(t, 5*time.Second, func() error {
		mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1}) // an event after the interval passed
		if got := r.savedSeq.Load(); got < 2 {
			return fmt.Errorf("snapshot at seq %d, want 2 or later", got)
		}
		return nil
	})
	st, err := h.snaps.load(context.Background(), "t1")
	if err != nil || st.Seq() < 2 {
		t.Fatalf("snapshot file: seq %d, %v", st.Seq(), err)
	}
}

// TestNewNodeStartsFromSharedSnapshot: a node with an empty data directory
// loads the newest snapshot another node stored in the cluster's bucket and
// replays only the stream's tail after it, and holds the same board.
func TestNewNodeStartsFromSharedSnapshot(t *testing.T) {
	url := startNATS(t)
	a := startHub(t, Config{NATSURL: url})
	c := startHub(t, Config{NATSURL: url})
	mustPut(t, a, "t1", "b", Settings{})
	for i := range 20 {
		mustSubmit(t, a, "t1", "b", Item{Member: fmt.Sprintf("p%d", i), Score: float64(i)})
	}
	if err := a.Close(); err != nil { // writes its snapshot, and stores it in the bucket
		t.Fatal(err)
	}
	snapSeq := a.reg.lookup("t1").applied.Load()
	for i := range 5 { // the tail, through another node
		mustSubmit(t, c, "t1", "b", Item{Member: fmt.Sprintf("q%d", i), Score: float64(100 + i)})
	}
	b := startHub(t, Config{NATSURL: url}) // a fresh --data
	st := b.Stats()
	if len(st) != 1 || st[0].Start != snapSeq || st[0].Applied != snapSeq+5 {
		t.Fatalf("new node %+v, want to start from the shared snapshot at %d and apply 5 more", st, snapSeq)
	}
	want, err := c.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("new node's board\n%v\nwant\n%v", got, want)
	}
}

// Snapshots by count fall on the multiples of SnapshotEvery, as the
// divergence checkpoints do (so both share one encoding), also after a
// restart from a snapshot at another sequence.
func TestSnapshotsFallOnMultiples(t *testing.T) {
	cfg := Config{DataDir: t.TempDir(), SnapshotEvery: 5, SnapshotInterval: time.Hour}
	a := startHub(t, cfg)
	mustPut(t, a, "t1", "b", Settings{})
	for i := range 6 { // seq 2..7
		mustSubmit(t, a, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	a.Close() // its snapshot is at 7
	b := startHub(t, cfg)
	for i := 6; i < 14; i++ { // seq 8..15
		mustSubmit(t, b, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
		r := b.reg.lookup("t1")
		if seq := r.applied.Load(); seq == 10 || seq == 15 {
			checkFor(t, 5*time.Second, func() error {
				if got := r.savedSeq.Load(); got != seq {
					return fmt.Errorf("at seq %d the last snapshot is at %d, want %d", seq, got, seq)
				}
				return nil
			})
		}
	}
}
