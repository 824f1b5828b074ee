package hub

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	fprint "github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// published collects a Fingerprints' checkpoints.
type published struct {
	mu  sync.Mutex
	got map[uint64]fprint.Checkpoint
}

func (p *published) add(tenant string, c fprint.Checkpoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got[c.Seq] = c
}

func (p *published) at(seq uint64) (fprint.Checkpoint, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.got[seq]
	return c, ok
}

// A replica publishes the hash of its snapshot bytes at every multiple of
// Every. Told that its copy diverged, the tenant answers 503 naming the
// sequence, is rebuilt from the stream to the bytes it had before it was
// corrupted, serves again, and takes writes that go on meanwhile.
func TestFingerprintsCheckpointAndRebuild(t *testing.T) {
	pub := &published{got: map[uint64]fprint.Checkpoint{}}
	fps := &Fingerprints{Every: 5, Publish: pub.add}
	h := startHub(t, Config{Fingerprints: fps})
	mustPut(t, h, "t1", "b", Settings{})
	for i := range 9 { // seq 2..10
		mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	good := fingerprint(t, h, "t1")
	r := h.reg.lookup("t1")
	checkFor(t, 5*time.Second, func() error {
		c, ok := pub.at(10)
		if _, ok5 := pub.at(5); !ok || !ok5 {
			return errors.New("checkpoints 5 and 10 not published")
		}
		if c != fprint.Of(10, good) {
			return errors.New("checkpoint 10 is not the hash of the snapshot at 10")
		}
		if r.savedSeq.Load() != 10 { // a checkpoint is a snapshot: corrupt (the test writing st) waits until the replica goroutine is done with it
			return errors.New("the checkpoint's snapshot at 10 not written yet")
		}
		return nil
	})
	corrupt(r, "b")
	if bytes.Equal(fingerprint(t, h, "t1"), good) {
		t.Fatal("the corruption changed nothing")
	}
	if !fps.Diverged("t1", 10) || !fps.Diverged("t1", 10) || fps.Diverged("nobody", 10) {
		t.Fatal("Diverged: want true for an open tenant, rebuilding or not, false for one not open")
	}
	checkFor(t, 10*time.Second, func() error {
		if _, err := h.Top(Loc{Tenant: "t1", Board: "b", Window: "all"}, 0, nil, 10); err != nil {
			return err
		}
		if fps.Rebuilding() != 0 {
			return errors.New("still rebuilding")
		}
		return nil
	})
	if !bytes.Equal(fingerprint(t, h, "t1"), good) {
		t.Fatal("rebuilt state differs from the state before the corruption")
	}
	checkFor(t, 5*time.Second, func() error { // the local snapshot is the rebuilt state's at once
		data, err := os.ReadFile(h.snaps.files.Path("t1"))
		if err != nil || !bytes.Equal(data, good) {
			return fmt.Errorf("local snapshot not the rebuilt state (%v)", err)
		}
		return nil
	})
	mustSubmit(t, h, "t1", "b", Item{Member: "late", Score: 100})
	if got := top(t, h, Loc{Tenant: "t1", Board: "b", Window: "all"}); len(got) != 10 || got[0] != "late:100" {
		t.Fatalf("after the rebuild: %v", got)
	}
}

// While a diverged tenant is rebuilt its reads answer ErrUnavailable naming
// the checkpoint; a rebuild that cannot finish (the Hub closes) leaves
// nothing running.
func TestFingerprintsDivergedAnswers503(t *testing.T) {
	fps := &Fingerprints{Every: 1000}
	h := startHub(t, Config{Fingerprints: fps})
	mustPut(t, h, "t1", "b", Settings{})
	r := h.reg.lookup("t1")
	r.fp.diverged.Store(42) // as Diverged does, without the rebuild
	if h.Beat("t1").Writable {
		t.Fatal("the heartbeat of a diverged tenant says writable")
	}
	_, err := h.Top(Loc{Tenant: "t1", Board: "b", Window: "all"}, 0, nil, 10)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "diverged") || !strings.Contains(err.Error(), "seq 42") {
		t.Fatalf("read of a diverged tenant: %v", err)
	}
	if _, err := h.Submit(testCtx(t), "t1", "b", []Item{{Member: "m", Score: 1}}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("write to a diverged tenant: %v", err)
	}
	r.fp.diverged.Store(0)
	if !h.Beat("t1").Writable {
		t.Fatal("the heartbeat of a tenant served again says not writable")
	}
	if fps.Diverged("t1", 7) != true {
		t.Fatal("Diverged")
	}
	h.Close() // stops the rebuild; Close waits for it
	if !fps.Diverged("t1", 8) || fps.Rebuilding() != 0 {
		t.Fatal("Diverged after Close: want true (nothing to hand over again) and no rebuild")
	}
}

// corrupt changes r's state without moving its sequence: a submission the
// stream never held, as a bad snapshot or a changed event would leave it.
func corrupt(r *replica, board string) {
	ev := &ledger.Event{Kind: ledger.EvSubmit, Board: board, Items: []Item{{Member: "cheat", Score: 1e9}}}
	ev.Prepare()
	r.mu.Lock()
	r.st.Apply(r.applied.Load(), ev)
	r.mu.Unlock()
}

// A tenant's opening replays its stream without checkpoints (the others
// published them long ago); events after the opening take them again.
func TestFingerprintsNoneWhileCatchingUp(t *testing.T) {
	dir := t.TempDir()
	first := &published{got: map[uint64]fprint.Checkpoint{}}
	h := startHub(t, Config{DataDir: dir, Fingerprints: &Fingerprints{Every: 5, Publish: first.add}})
	mustPut(t, h, "t1", "b", Settings{})
	for i := range 9 {
		mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	h.Close()
	if err := os.RemoveAll(snapfile.In(dir).Dir); err != nil { // the whole stream is replayed
		t.Fatal(err)
	}
	again := &published{got: map[uint64]fprint.Checkpoint{}}
	h = startHub(t, Config{DataDir: dir, Fingerprints: &Fingerprints{Every: 5, Publish: again.add}})
	for i := 9; i < 14; i++ { // seq 11..15
		mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	checkFor(t, 5*time.Second, func() error {
		if _, ok := again.at(15); !ok {
			return errors.New("no checkpoint at 15")
		}
		return nil
	})
	for _, seq := range []uint64{5, 10} {
		if _, ok := again.at(seq); ok {
			t.Errorf("checkpoint %d taken while catching up", seq)
		}
	}
}

// A checkpoint and a snapshot at the same event share one encoding: the
// snapshot written at a checkpoint is the bytes the checkpoint hashed.
func TestFingerprintsCheckpointIsSnapshot(t *testing.T) {
	pub := &published{got: map[uint64]fprint.Checkpoint{}}
	h := startHub(t, Config{Fingerprints: &Fingerprints{Every: 5, Publish: pub.add}, SnapshotEvery: 5})
	mustPut(t, h, "t1", "b", Settings{})
	for i := range 9 { // seq 2..10
		mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(i)})
	}
	r := h.reg.lookup("t1")
	// A bound, not a pace: the snapshot's write took over 5 s twice on the
	// 2-core box with a full `go test -race ./...` beside it.
	checkFor(t, 30*time.Second, func() error {
		c, ok := pub.at(10)
		if !ok || r.savedSeq.Load() != 10 {
			return errors.New("checkpoint 10 not published or snapshot 10 not written")
		}
		data, err := os.ReadFile(h.snaps.files.Path("t1"))
		if err != nil || c != fprint.Of(10, data) {
			return fmt.Errorf("snapshot 10 is not what checkpoint 10 hashed (%v)", err)
		}
		return nil
	})
}
