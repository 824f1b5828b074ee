package snapbucket

import (
	"bytes"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/natstest"
)

func snapshotAt(t *testing.T, seq uint64) []byte {
	return snapAt(t, seq, false).Data
}

// snapAt is an empty state's snapshot at seq as a node shares it: its
// checkpoint named, agreed by the majority or not.
func snapAt(t *testing.T, seq uint64, agreed bool) Snapshot {
	t.Helper()
	st := ledger.New()
	st.Skip(seq)
	return snapOf(t, st, agreed)
}

// snapOf is st's snapshot, its checkpoint named.
func snapOf(t *testing.T, st *ledger.State, agreed bool) Snapshot {
	t.Helper()
	p, err := st.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	return Snapshot{Seq: st.Seq(), Sum: fingerprint.Of(st.Seq(), p.Clear()).Sum, Agreed: agreed, Data: p.Clear()}
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
	b.Save("a", snapAt(t, 5, false))
	b.Save("a", snapAt(t, 4, false)) // older: not stored
	if got, ok := b.Load(ctx, "a", 3, nil, false); !ok || got.Seq() != 5 {
		t.Fatalf("Load after 3: %v, %v; want the snapshot at 5", got, ok)
	}
	if _, ok := b.Load(ctx, "a", 5, nil, false); ok {
		t.Fatal("Load after 5 gave a snapshot that is not newer")
	}
	if _, ok := b.Load(ctx, "b", 0, nil, false); ok {
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

// Share opens the bucket at once where NATS answers, and hands it over
// once; where the first attempt fails it retries in the background until
// the bucket opens, and the wait group waits for that goroutine.
func TestShare(t *testing.T) {
	_, js := natstest.JetStream(t)
	log := slog.New(slog.DiscardHandler)
	var opened []*Bucket
	var wg sync.WaitGroup
	Share{JS: js, Replicas: 1, Log: log, Attempt: 2 * time.Second, Opened: func(b *Bucket) { opened = append(opened, b) }}.
		Start(t.Context(), t.Context(), &wg)
	wg.Wait()
	if len(opened) != 1 {
		t.Fatalf("opened %d times, want once", len(opened))
	}
	// A gate that refuses the first attempt: the bucket opens on a retry.
	refused := 0
	gate := func(request func() error) error {
		if refused == 0 {
			refused++
			return errors.New("restarting")
		}
		return request()
	}
	done := make(chan *Bucket, 1)
	Share{JS: js, Gate: gate, Replicas: 1, Log: log, Attempt: 2 * time.Second, Opened: func(b *Bucket) { done <- b }}.
		Start(t.Context(), t.Context(), &wg)
	wg.Wait()
	select {
	case b := <-done:
		if b == nil {
			t.Fatal("opened a nil bucket")
		}
	default:
		t.Fatal("the retry ended without opening the bucket")
	}
}
