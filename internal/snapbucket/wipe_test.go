package snapbucket

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/natstest"
)

// snapshotWith is a 300 KB snapshot-like object (3 chunks) holding mark.
func snapshotWith(mark string) []byte {
	return append(bytes.Repeat([]byte{'.'}, 300<<10), mark...)
}

// blocksHolding returns the files under dir whose bytes hold needle.
func blocksHolding(t *testing.T, dir, needle string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && bytes.Contains(data, []byte(needle)) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// A snapshot replaced by a newer one leaves no byte on disk: Save
// overwrites the replaced object's chunks, where nats.go's Put would only
// purge them (their bytes staying in the block files). The newer one
// reads back whole.
func TestSaveWipesReplaced(t *testing.T) {
	dir := t.TempDir()
	_, js := natstest.Connect(t, natstest.ServerIn(t, dir))
	ctx := t.Context()
	b, err := Open(ctx, js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", Snapshot{Seq: 5, Data: snapshotWith("PROFILE-OF-ANN")})
	if got := blocksHolding(t, dir, "PROFILE-OF-ANN"); len(got) == 0 {
		t.Fatal("the first snapshot is in no file: the search cannot fail")
	}
	b.Save("a", Snapshot{Seq: 6, Data: snapshotWith("PROFILE-AT-SIX")})
	if got := blocksHolding(t, dir, "PROFILE-OF-ANN"); len(got) > 0 {
		t.Fatalf("the replaced snapshot's bytes stay in %v", got)
	}
	if data, ok, err := b.Get(ctx, "a"); !ok || err != nil || !bytes.Equal(data, snapshotWith("PROFILE-AT-SIX")) {
		t.Fatalf("Get after the replacement: ok %v, err %v, %d bytes", ok, err, len(data))
	}
}

// A node that read the object before another node replaced it stores
// nothing over the newer one and wipes only its own chunks: the other
// node's object reads back whole.
func TestSaveLosingRaceWipesOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	_, js := natstest.Connect(t, natstest.ServerIn(t, dir))
	ctx := t.Context()
	b, err := Open(ctx, js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", Snapshot{Seq: 5, Data: snapshotWith("FIVE")})
	stale, err := b.current(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", Snapshot{Seq: 7, Data: snapshotWith("SEVEN")}) // another node's, after this one read
	err = b.put(ctx, "a", Snapshot{Seq: 8, Data: snapshotWith("EIGHT-LOST")}, stale)
	if !lostRace(err) {
		t.Fatalf("put over a stale read: %v, want a lost race", err)
	}
	if data, ok, err := b.Get(ctx, "a"); !ok || err != nil || !bytes.Equal(data, snapshotWith("SEVEN")) {
		t.Fatalf("Get after the lost race: ok %v, err %v, %d bytes; want the snapshot at 7", ok, err, len(data))
	}
	for _, gone := range []string{"FIVE", "EIGHT-LOST"} {
		if got := blocksHolding(t, dir, gone); len(got) > 0 {
			t.Fatalf("%s stays in %v", gone, got)
		}
	}
}

// The cost of a save with its wipe against nats.go's Put (which purges),
// for a 1 MB snapshot (8 chunks): the wipe adds one read and one delete
// request per chunk.
func BenchmarkSave(b *testing.B) {
	_, js := natstest.JetStream(b)
	bucket, err := Open(b.Context(), js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte{'x'}, 1<<20)
	b.Run("SaveAndWipe", func(b *testing.B) {
		for i := range b.N {
			bucket.Save("a", Snapshot{Seq: uint64(i + 1), Data: data})
		}
	})
	b.Run("PutAndPurge", func(b *testing.B) {
		for b.Loop() {
			if _, err := bucket.store.PutBytes(b.Context(), "b", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A node that reads the object while another replaces it, a chunk
// already overwritten, gets an error (the checksum fails), never other
// bytes: Load then logs and the node replays the stream instead.
func TestReadRacingWipeFails(t *testing.T) {
	_, js := natstest.JetStream(t)
	ctx := t.Context()
	b, err := Open(ctx, js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", Snapshot{Seq: 5, Data: snapshotWith("THREE-CHUNKS")})
	cur, err := b.current(ctx, "a")
	if err != nil || cur.info == nil || cur.info.Chunks != 3 {
		t.Fatalf("object: %+v, %v; want 3 chunks", cur.info, err)
	}
	if _, ok, err := b.Get(ctx, "a"); !ok || err != nil {
		t.Fatalf("Get of the whole object: %v: the test proves nothing", err)
	}
	last, err := b.stream.GetLastMsgForSubject(ctx, chunkSubject(cur.info.NUID))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.stream.SecureDeleteMsg(ctx, last.Sequence-1); err != nil { // the middle chunk
		t.Fatal(err)
	}
	if data, ok, err := b.Get(ctx, "a"); ok || !errors.Is(err, jetstream.ErrDigestMismatch) {
		t.Fatalf("Get with a chunk overwritten: %d bytes, ok %v, err %v; want a digest mismatch", len(data), ok, err)
	}
}

// An erasure on a clustered node, whose own snapshot there is no agreed
// checkpoint, withdraws the older shared snapshot: no byte of it stays on
// disk, Load finds none, and the next agreed snapshot is stored as ever.
// A shared snapshot at or after the erasure stays.
func TestErasureWithdrawsOlderShared(t *testing.T) {
	dir := t.TempDir()
	_, js := natstest.Connect(t, natstest.ServerIn(t, dir))
	ctx := t.Context()
	b, err := Open(ctx, js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", Snapshot{Seq: 5, Data: snapshotWith("SEALED-PROFILE"), Agreed: true})
	b.Save("z", Snapshot{Seq: 9, Data: snapshotWith("AFTER-ERASURE"), Agreed: true})
	if got := blocksHolding(t, dir, "SEALED-PROFILE"); len(got) == 0 {
		t.Fatal("the shared snapshot is in no file: the search cannot fail")
	}
	a := NewAgreement(5, ctx.Done())
	a.Offer(b, "a", 7, nil, []byte("erased at 7"), []byte("erased at 7"), true) // 7: no checkpoint
	a.Offer(b, "z", 7, nil, []byte("erased at 7"), []byte("erased at 7"), true)
	if got := blocksHolding(t, dir, "SEALED-PROFILE"); len(got) > 0 {
		t.Fatalf("the withdrawn snapshot's bytes stay in %v", got)
	}
	if _, ok, err := b.Get(ctx, "a"); ok || err != nil {
		t.Fatalf("Get after the withdrawal: ok %v, err %v; want none", ok, err)
	}
	if _, ok, err := b.Get(ctx, "z"); !ok || err != nil {
		t.Fatalf("a shared snapshot newer than the erasure was withdrawn: ok %v, err %v", ok, err)
	}
	good := snapAt(t, 10, true)
	a.Agree(fingerprint.Checkpoint{Seq: 10, Sum: good.Sum})
	a.Offer(b, "a", 10, nil, good.Data, good.Data, false)
	if st, ok := b.Load(ctx, "a", 0, nil, true); !ok || st.Seq() != 10 {
		t.Fatalf("the next agreed snapshot after a withdrawal: %v", ok)
	}
}
