package hub

import (
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// BenchmarkBootstrapShared measures how long a new node takes to serve a
// tenant of N members when it starts with an empty data directory on a
// shared NATS: fetch the newest snapshot from the cluster's bucket, decode
// it, replay the (here empty) tail. Each op is one Start until ready, on a
// fresh directory; Close is outside the timer. The tenant is built once
// per size by another node, which stores its snapshot in the bucket at
// Close. Compare with BenchmarkRestart/N=.../snapshot (the node's own
// file) and .../replay (no snapshot at all) in the same run.
//
//	go test ./hub -run '^$' -bench 'BootstrapShared/N=1e6|Restart/N=1e6' -benchtime 3x
func BenchmarkBootstrapShared(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run("N="+sizeName(n), func(b *testing.B) {
			url := startNATS(b)
			buildShared(b, url, n)
			timeStarts(b, n, freshNode(b, url), func(h *Hub) { fromShared(b, h) })
		})
	}
}

// buildShared has a node on url build tenant t1's board s with n members
// in batches of 1,000, then close, storing its snapshot in the bucket.
func buildShared(b *testing.B, url string, n int) {
	b.Helper()
	h, err := Start(benchCtx(b), Config{DataDir: b.TempDir(), NATSURL: url, SnapshotEvery: -1})
	if err != nil {
		b.Fatalf("Start: %v", err)
	}
	start := time.Now()
	fillBoard(b, h, n, Settings{})
	if err := h.Close(); err != nil {
		b.Fatalf("Close: %v", err)
	}
	b.Logf("built %d members and stored the snapshot in %v", n, time.Since(start))
}

// BenchmarkBootstrapSharedEvents is the shape: a tenant of
// 1,000,000 members written as 1,000,000 single-item events. The node
// that wrote the first 900,000 stored its snapshot in the bucket when it
// closed; the last 100,000 events (the most a tail holds: snapshots are
// taken every 100,000 events) came after, with no node running. Each op
// is a fresh node's Start until ready: fetch, decode, replay the tail.
//
//	go test ./hub -run '^$' -bench 'BootstrapSharedEvents' -benchtime 3x -timeout 20m
func BenchmarkBootstrapSharedEvents(b *testing.B) {
	const n, tail = 1_000_000, 100_000
	url := startNATS(b)
	h, err := Start(benchCtx(b), Config{DataDir: b.TempDir(), NATSURL: url, SnapshotEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.PutBoard(benchCtx(b), "t1", "s", Settings{}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	publishSingles(b, h.js, 0, n-tail)
	r := h.reg.lookup("t1")
	if err := r.waitApplied(benchCtx(b), r.follow.Stored()); err != nil {
		b.Fatal(err)
	}
	if err := h.Close(); err != nil { // stores the snapshot at 900,001 in the bucket
		b.Fatal(err)
	}
	tailNode, err := Start(benchCtx(b), Config{DataDir: b.TempDir(), NATSURL: url, SnapshotEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	publishSingles(b, tailNode.js, n-tail, n)
	tailNode.snaps.shared.Store(nil) // its snapshot must not reach the bucket: the tail stays a tail
	tailNode.Close()
	b.Logf("built %d members in %d events in %v", n, n+1, time.Since(start))
	timeStarts(b, n, freshNode(b, url), func(fresh *Hub) {
		fromShared(b, fresh)
		fresh.snaps.shared.Store(nil) // its snapshot must not reach the bucket either
	})
}

// freshNode is timeStarts' next for a new node on the shared NATS at url:
// an empty data directory each time.
func freshNode(b *testing.B, url string) func() Config {
	return func() Config { return Config{DataDir: b.TempDir(), NATSURL: url, SnapshotEvery: -1} }
}

// fromShared fails unless h's one tenant started from the snapshot in the
// cluster's bucket.
func fromShared(b *testing.B, h *Hub) {
	if st := h.Stats(); len(st) != 1 || st[0].Start == 0 {
		b.Fatalf("new node did not start from the shared snapshot: %+v", st)
	}
}

// publishSingles publishes one single-item group event per member m<from>
// .. m<to-1> to tenant t1's stream, 256 in flight, as the gateway encodes
// them.
func publishSingles(b *testing.B, js jetstream.JetStream, from, to int) {
	b.Helper()
	acks, done := awaitAcks(256)
	for m := from; m < to; m++ {
		ev := &ledger.Event{Kind: ledger.EvGroup, At: 1, Groups: []ledger.Group{{Board: "s", Items: []Item{{Member: "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)}}}}}
		data, _ := ledger.EncodeEvent(ev)
		f, err := js.PublishAsync(subjectName("t1"), data)
		if err != nil {
			b.Fatal(err)
		}
		acks <- f
	}
	close(acks)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
