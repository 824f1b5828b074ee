package snapbucket

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/natstest"
)

func snapshotAt(t *testing.T, seq uint64) []byte {
	t.Helper()
	st := ledger.New()
	st.Skip(seq)
	data, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A snapshot is stored unless the bucket holds a newer one, loaded only
// where it is newer than the caller's, and kept per tenant.
func TestBucket(t *testing.T) {
	_, js := natstest.JetStream(t)
	ctx := t.Context()
	log := slog.New(slog.DiscardHandler)
	if _, err := Existing(ctx, js, log); err == nil {
		t.Fatal("Existing found a bucket nobody created")
	}
	gated := 0
	b, err := Open(ctx, js, func(request func() error) error { gated++; return request() }, 1, log)
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", 5, snapshotAt(t, 5))
	b.Save("a", 4, snapshotAt(t, 4)) // older: not stored
	if got, ok := b.Load(ctx, "a", 3); !ok || got.Seq() != 5 {
		t.Fatalf("Load after 3: %v, %v; want the snapshot at 5", got, ok)
	}
	if _, ok := b.Load(ctx, "a", 5); ok {
		t.Fatal("Load after 5 gave a snapshot that is not newer")
	}
	if _, ok := b.Load(ctx, "b", 0); ok {
		t.Fatal("tenant b loaded a's snapshot")
	}
	ro, err := Existing(ctx, js, log)
	if err != nil {
		t.Fatal(err)
	}
	if data, ok, err := ro.Get(ctx, "a"); err != nil || !ok || !bytes.Equal(data, snapshotAt(t, 5)) {
		t.Fatalf("Get a: ok %v, err %v", ok, err)
	}
	if _, ok, err := ro.Get(ctx, "b"); ok || err != nil {
		t.Fatalf("Get b: ok %v, err %v; want none", ok, err)
	}
	if gated == 0 {
		t.Fatal("no request passed the gate")
	}
}
