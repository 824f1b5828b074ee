package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	fprint "github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapbucket"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// clusteredHub starts a hub with checkpoints every 5 events, snapshots at
// each, on the shared NATS at url, and waits until its snapshot bucket is
// open (it opens in the background).
func clusteredHub(t *testing.T, url string, pub *published) (*Hub, *Fingerprints) {
	t.Helper()
	return clusteredHubIn(t, url, t.TempDir(), pub)
}

// clusteredHubIn is clusteredHub on the data directory dir.
func clusteredHubIn(t *testing.T, url, dir string, pub *published) (*Hub, *Fingerprints) {
	t.Helper()
	fps := &Fingerprints{Every: 5, Publish: pub.add}
	h := startHub(t, Config{NATSURL: url, DataDir: dir, Fingerprints: fps, SnapshotEvery: 5, SnapshotInterval: time.Hour})
	checkFor(t, 10*time.Second, func() error {
		if h.snaps.shared.Load() == nil {
			return errors.New("snapshot bucket not open yet")
		}
		return nil
	})
	return h, fps
}

// sharedSnapshot returns the state in the bucket, read as the audit does
// (no check), or nil where the bucket holds none.
func sharedSnapshot(t *testing.T, h *Hub, tenant string) *ledger.State {
	t.Helper()
	data, ok, err := h.snaps.shared.Load().Get(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	st, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A node whose copy diverged shares nothing: told that the majority
// agreed with a checkpoint its own differs from, its snapshot there stays
// local (the bucket stays empty), where a healthy node's, agreed, is
// stored. Its divergence distrusts its file; its rebuild, from the agreed
// shared snapshot, ends equal to the healthy node, its file trusted again.
func TestDivergedNodeSharesNothing(t *testing.T) {
	url := startNATS(t)
	pubA, pubV := &published{got: map[uint64]fprint.Checkpoint{}}, &published{got: map[uint64]fprint.Checkpoint{}}
	a, fpsA := clusteredHub(t, url, pubA)
	v, fpsV := clusteredHub(t, url, pubV)
	mustPut(t, a, "t1", "b", Settings{})
	for i := range 3 { // seq 2..4
		mustSubmit(t, a, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	checkFor(t, 10*time.Second, func() error { // v opens t1 on its first request, then follows
		if _, err := v.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 10); err != nil {
			return err
		}
		if got := v.reg.lookup("t1").applied.Load(); got != 4 {
			return fmt.Errorf("v at seq %d", got)
		}
		return nil
	})
	rv := v.reg.lookup("t1")
	corrupt(rv, "b")                                          // v's copy now holds a submission the stream never had
	mustSubmit(t, a, "t1", "b", Item{Member: "m3", Score: 3}) // seq 5: a checkpoint and a snapshot on both
	var good, bad fprint.Checkpoint
	checkFor(t, 10*time.Second, func() error {
		var okA, okV bool
		good, okA = pubA.at(5)
		bad, okV = pubV.at(5)
		if !okA || !okV {
			return errors.New("checkpoint 5 not published by both")
		}
		return nil
	})
	if good == bad {
		t.Fatal("the corruption changed no checkpoint: the test proves nothing")
	}
	fpsV.Agreed("t1", good) // the majority's checkpoint: not v's
	checkFor(t, 10*time.Second, func() error {
		if rv.savedSeq.Load() != 5 || rv.saving.Load() {
			return errors.New("v's snapshot at 5 not written yet")
		}
		return nil
	})
	if st := sharedSnapshot(t, v, "t1"); st != nil {
		t.Fatalf("the diverged node shared its snapshot at %d", st.Seq())
	}
	fpsA.Agreed("t1", good)
	checkFor(t, 10*time.Second, func() error {
		if st := sharedSnapshot(t, a, "t1"); st == nil || st.Seq() != 5 {
			return errors.New("the healthy node's agreed snapshot at 5 not shared")
		}
		return nil
	})
	if !fpsV.Diverged("t1", 5) {
		t.Fatal("Diverged")
	}
	checkFor(t, 10*time.Second, func() error {
		if fpsV.Rebuilding() != 0 {
			return errors.New("still rebuilding")
		}
		if _, err := v.snaps.loadLocal("t1"); err != nil {
			return fmt.Errorf("the file: %w", err)
		}
		return nil
	})
	if !bytes.Equal(fingerprint(t, v, "t1"), fingerprint(t, a, "t1")) {
		t.Fatal("rebuilt state differs from the healthy node's")
	}
	if data, err := os.ReadFile(v.snaps.files.Path("t1")); err != nil || !bytes.Equal(data, fingerprint(t, a, "t1")) {
		t.Fatalf("v's file after the rebuild is not the healthy state (%v)", err)
	}
}

// A wrong snapshot in the bucket (another state under the majority's
// checkpoint, marked agreed) is refused by a node that starts from the
// bucket: it replays the stream instead and holds the right standings. A
// snapshot no majority agreed with is refused by a clustered node too.
func TestWrongSharedSnapshotRefused(t *testing.T) {
	url := startNATS(t)
	pubA := &published{got: map[uint64]fprint.Checkpoint{}}
	a, _ := clusteredHub(t, url, pubA)
	mustPut(t, a, "t1", "b", Settings{})
	for i := range 7 { // seq 2..8
		mustSubmit(t, a, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	want := top(t, a, Loc{Tenant: "t1", Board: "b"})
	good := fingerprint(t, a, "t1")
	wrong, err := ledger.Decode(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	cheat := &ledger.Event{Kind: ledger.EvSubmit, Board: "b", Items: []Item{{Member: "cheat", Score: 1e9}}}
	cheat.Prepare()
	wrong.Apply(wrong.Seq(), cheat)
	wrong8 := encode(t, wrong)
	wrong.Skip(9)
	wrong9 := encode(t, wrong)
	bucket := a.snaps.shared.Load()
	for i, snap := range []snapbucket.Snapshot{
		{Seq: 8, Sum: fprint.Of(8, wrong8).Sum, Agreed: false, Data: wrong8}, // true to itself, agreed by nobody
		{Seq: 9, Sum: fprint.Of(9, good).Sum, Agreed: true, Data: wrong9},    // lies about its state
	} {
		bucket.Save("t1", snap)
		if st := sharedSnapshot(t, a, "t1"); st == nil || st.Seq() != snap.Seq {
			t.Fatalf("case %d: the wrong snapshot is not in the bucket: the test proves nothing", i)
		}
		fresh, _ := clusteredHub(t, url, &published{got: map[uint64]fprint.Checkpoint{}})
		checkFor(t, 10*time.Second, func() error {
			_, err := fresh.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 10)
			return err
		})
		if got := top(t, fresh, Loc{Tenant: "t1", Board: "b"}); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d: the node that started from the bucket serves %v, want %v", i, got, want)
		}
		if st := fresh.Stats(); len(st) != 1 || st[0].Start != 0 {
			t.Fatalf("case %d: started from %+v, want a replay from the stream's start", i, st)
		}
		fresh.Close()
	}
}

// A node stopped while its diverged copy was not rebuilt yet writes its
// (wrong) state to its file at the stop; restarted, it does not load that
// file (Distrust's mark, as Diverged leaves it) but replays the stream.
func TestDistrustedFileNotLoaded(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, Config{DataDir: dir})
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "ann", Score: 1})
	want := top(t, h, Loc{Tenant: "t1", Board: "b"})
	corrupt(h.reg.lookup("t1"), "b")
	if err := snapfile.In(dir).Distrust("t1", h.log); err != nil { // what Diverged does first
		t.Fatal(err)
	}
	h.Close() // its final snapshot holds the corruption
	if st, err := ledger.Decode(mustRead(t, snapfile.In(dir).Path("t1")), nil); err != nil || st.Seq() != 2 {
		t.Fatalf("the stop wrote no snapshot to distrust (%v): the test proves nothing", err)
	}
	h = startHub(t, Config{DataDir: dir})
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the restart: %v, want %v", got, want)
	}
	if st := h.Stats(); len(st) != 1 || st[0].Start != 0 {
		t.Fatalf("started from %+v, want a replay from the stream's start", st)
	}
}

func encode(t *testing.T, st *ledger.State) []byte {
	t.Helper()
	data, err := st.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The rebuilt state's snapshot is written even where a snapshot of the
// diverged state is still in flight when the rebuild is adopted (here: a
// checkpoint's snapshot waiting for the cluster's verdict): it is queued
// after that one, not skipped until the next periodic snapshot.
func TestRebuiltSnapshotQueuedBehindInFlight(t *testing.T) {
	url := startNATS(t)
	v, fpsV := clusteredHub(t, url, &published{got: map[uint64]fprint.Checkpoint{}})
	mustPut(t, v, "t1", "b", Settings{})
	for i := range 3 { // seq 2..4
		mustSubmit(t, v, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	r := v.reg.lookup("t1")
	corrupt(r, "b")
	mustSubmit(t, v, "t1", "b", Item{Member: "m3", Score: 3}) // seq 5: its snapshot waits for a verdict that does not come
	checkFor(t, 5*time.Second, func() error {
		if !r.saving.Load() {
			return errors.New("the snapshot at 5 is not in flight")
		}
		return nil
	})
	if !fpsV.Diverged("t1", 4) { // diverged at 4: the verdict on 5 stays open, the save in flight
		t.Fatal("Diverged")
	}
	checkFor(t, 10*time.Second, func() error {
		if fpsV.Rebuilding() != 0 {
			return errors.New("still rebuilding")
		}
		return nil
	})
	if !r.saving.Load() {
		t.Fatal("the save in flight ended before the rebuild was adopted: the test proves nothing")
	}
	rebuilt := fingerprint(t, v, "t1")
	checkFor(t, 3*snapbucket.AgreeWait, func() error {
		data, err := os.ReadFile(v.snaps.files.Path("t1"))
		if err != nil || !bytes.Equal(data, rebuilt) {
			return fmt.Errorf("the file does not hold the rebuilt state (%v)", err)
		}
		if _, err := v.snaps.loadLocal("t1"); err != nil {
			return fmt.Errorf("the file is still distrusted: %v", err)
		}
		return nil
	})
}

// A clustered node restarts from the shared snapshot the cluster agreed
// with, not from its own file, even where the file is newer: nothing
// vouches for the file, which here went wrong while the node was stopped
// (one more member, a valid checksum). It serves the right standings from
// its first answer.
func TestRestartPrefersAgreedShared(t *testing.T) {
	url := startNATS(t)
	pubA := &published{got: map[uint64]fprint.Checkpoint{}}
	a, fpsA := clusteredHub(t, url, pubA)
	dir := t.TempDir()
	v, _ := clusteredHubIn(t, url, dir, &published{got: map[uint64]fprint.Checkpoint{}})
	mustPut(t, a, "t1", "b", Settings{})
	for i := range 6 { // seq 2..7
		mustSubmit(t, a, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	checkFor(t, 10*time.Second, func() error {
		good, ok := pubA.at(5)
		if !ok {
			return errors.New("no checkpoint at 5")
		}
		fpsA.Agreed("t1", good)
		if st := sharedSnapshot(t, a, "t1"); st == nil || st.Seq() != 5 {
			return errors.New("the agreed snapshot at 5 not shared yet")
		}
		return nil
	})
	checkFor(t, 10*time.Second, func() error {
		if _, err := v.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 10); err != nil {
			return err
		}
		if got := v.reg.lookup("t1").applied.Load(); got != 7 {
			return fmt.Errorf("v at seq %d", got)
		}
		return nil
	})
	want := top(t, a, Loc{Tenant: "t1", Board: "b"})
	v.Close() // its file: the state at 7
	path := snapfile.In(dir).Path("t1")
	st, err := ledger.Decode(mustRead(t, path), nil)
	if err != nil || st.Seq() != 7 {
		t.Fatalf("v's file: %v: the test proves nothing", err)
	}
	cheat := &ledger.Event{Kind: ledger.EvSubmit, Board: "b", Items: []Item{{Member: "cheat", Score: 1e9}}}
	cheat.Prepare()
	st.Apply(st.Seq(), cheat)
	if err := os.WriteFile(path, encode(t, st), 0o644); err != nil {
		t.Fatal(err)
	}
	v, _ = clusteredHubIn(t, url, dir, &published{got: map[uint64]fprint.Checkpoint{}})
	checkFor(t, 10*time.Second, func() error {
		_, err := v.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 10)
		return err
	})
	if got := top(t, v, Loc{Tenant: "t1", Board: "b"}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the restarted node serves %v, want %v", got, want)
	}
	if st := v.Stats(); len(st) != 1 || st[0].Start != 5 {
		t.Fatalf("restarted from %+v, want the agreed shared snapshot at 5", st)
	}
}
