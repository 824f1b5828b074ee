package hub

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkReadUnderWrites measures a read's latency from the replica (no
// HTTP) on a board of 1,000,000 members while a writer applies 20,000
// submissions per second in batches of 100 that move random members (policy
// latest). Each op is one read, rotating top?limit=10, member and around
// radius 5; it reports the p50, p99 and p99.9 of the reads' latencies and
// the write rate reached.
//
//	go test ./hub -run '^$' -bench 'ReadUnderWrites' -benchtime 2000000x
func BenchmarkReadUnderWrites(b *testing.B) {
	// Four writers, each paced to a quarter of the rate: one call waits for
	// its ack and apply, so a single writer could not keep 200 batches/s.
	const n, rate, batch, writers = 1_000_000, 20_000, 100, 4
	h := startReadBench(b, n)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := 0
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := writeAtRate(ctx, b, h, n, rate/writers, batch, uint64(w))
			mu.Lock()
			written += got
			mu.Unlock()
		}()
	}
	loc := Loc{Tenant: "t1", Board: "s"}
	lat := make([]time.Duration, 0, b.N)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		m := "m" + strconv.Itoa(rng.IntN(n))
		t0 := time.Now()
		var err error
		switch i % 3 {
		case 0:
			_, err = h.Top(loc, 0, nil, 10)
		case 1:
			_, err = h.Member(loc, m)
		default:
			_, err = h.Around(loc, m, 5)
		}
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	elapsed := time.Since(start)
	stop()
	wg.Wait()
	reportLatencies(b, lat)
	b.ReportMetric(float64(written)/elapsed.Seconds(), "writes/s")
}

func startReadBench(b *testing.B, n int) *Hub {
	dir := buildBenchDir(b, n, Settings{Policy: "latest"})
	h, err := Start(benchCtx(b), Config{DataDir: dir})
	if err != nil {
		b.Fatalf("Start: %v", err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

// writeAtRate submits batches of random members' new scores, paced to rate
// items per second, until ctx ends; it returns the items acknowledged.
func writeAtRate(ctx context.Context, b *testing.B, h *Hub, n, rate, batch int, seed uint64) int {
	rng := rand.New(rand.NewPCG(3, seed))
	tick := time.NewTicker(time.Second * time.Duration(batch) / time.Duration(rate))
	defer tick.Stop()
	done := 0
	items := make([]Item, batch)
	for {
		select {
		case <-ctx.Done():
			return done
		case <-tick.C:
		}
		for i := range items {
			items[i] = Item{Member: "m" + strconv.Itoa(rng.IntN(n)), Score: float64(rng.IntN(1_000_003))}
		}
		if _, err := h.Submit(ctx, "t1", "s", items); err != nil {
			if ctx.Err() != nil {
				return done
			}
			b.Errorf("Submit: %v", err)
			return done
		}
		done += batch
	}
}

func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds())
	}
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(at(0.999), "p99.9-µs")
}

// BenchmarkTopRead is one top?limit=10 read of a 10,000-member board from
// the replica (no HTTP, no writes): the read path's own cost and
// allocations, the rows included.
//
//	go test ./hub -run '^$' -bench 'TopRead' -benchmem -count 5
func BenchmarkTopRead(b *testing.B) {
	h := startReadBench(b, 10_000)
	loc := Loc{Tenant: "t1", Board: "s"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Top(loc, 0, nil, 10); err != nil {
			b.Fatal(err)
		}
	}
}
