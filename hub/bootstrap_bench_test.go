package hub

import (
	"testing"
	"time"
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
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				b.StartTimer()
				h, err := Start(benchCtx(b), Config{DataDir: dir, NATSURL: url, SnapshotEvery: -1})
				if err != nil {
					b.Fatalf("Start: %v", err)
				}
				b.StopTimer()
				if got := boardMembers(b, h); got != n {
					b.Fatalf("new node: %d members, want %d", got, n)
				}
				if st := h.Stats(); len(st) != 1 || st[0].Start == 0 {
					b.Fatalf("new node did not start from the shared snapshot: %+v", st)
				}
				h.Close()
				b.StartTimer()
			}
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
	fillBoard(b, h, n)
	if err := h.Close(); err != nil {
		b.Fatalf("Close: %v", err)
	}
	b.Logf("built %d members and stored the snapshot in %v", n, time.Since(start))
}
