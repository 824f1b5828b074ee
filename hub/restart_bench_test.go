package hub

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRestart measures how long Start takes to bring a tenant of N
// members back: once from the snapshot Close wrote (load it, replay the empty
// tail), once with the snapshot removed (replay the whole stream, N/1,000
// batch events). Each op is one Start until ready; Close is outside the
// timer. The data directory is built once per size, outside the timer, by
// Submit in batches of 1,000.
//
//	go test ./hub -run '^$' -bench 'Restart/N=1e6' -benchtime 3x
func BenchmarkRestart(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run("N="+sizeName(n), func(b *testing.B) {
			dir := buildBenchDir(b, n, Settings{})
			snap := filepath.Join(dir, "snapshots", "t1.snap")
			saved, err := os.ReadFile(snap)
			if err != nil {
				b.Fatalf("no snapshot after Close: %v", err)
			}
			b.Run("snapshot", func(b *testing.B) {
				benchRestart(b, dir, n, func() { writeFile(b, snap, saved) })
				b.ReportMetric(float64(len(saved))/float64(n), "snapshot-B/member")
			})
			b.Run("replay", func(b *testing.B) {
				benchRestart(b, dir, n, func() { removeFile(b, snap) })
			})
			writeFile(b, snap, saved)
		})
	}
}

// benchRestart times Start on dir after prepare, b.N times, and checks that
// each start holds n members.
func benchRestart(b *testing.B, dir string, n int, prepare func()) {
	timeStarts(b, n, func() Config {
		prepare()
		return Config{DataDir: dir, SnapshotEvery: -1}
	}, nil)
}

// timeStarts times Start with the Config next returns, b.N times: next,
// the checks and Close are outside the timer. Each start must hold n
// members on tenant t1's board s, and pass check (nil: no more), which
// may also prepare the hub's Close.
func timeStarts(b *testing.B, n int, next func() Config, check func(*Hub)) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		cfg := next()
		b.StartTimer()
		h, err := Start(benchCtx(b), cfg)
		if err != nil {
			b.Fatalf("Start: %v", err)
		}
		b.StopTimer()
		if got := boardMembers(b, h); got != n {
			b.Fatalf("after Start: %d members, want %d", got, n)
		}
		if check != nil {
			check(h)
		}
		h.Close()
		b.StartTimer()
	}
}

// buildBenchDir returns a data directory holding tenant t1's board s,
// with settings s, of n members, submitted in batches of 1,000, and the
// snapshot Close wrote.
func buildBenchDir(b *testing.B, n int, s Settings) string {
	b.Helper()
	dir := b.TempDir()
	h, err := Start(benchCtx(b), Config{DataDir: dir, SnapshotEvery: -1})
	if err != nil {
		b.Fatalf("Start: %v", err)
	}
	start := time.Now()
	fillBoard(b, h, n, s)
	b.Logf("built %d members in %v", n, time.Since(start))
	if err := h.Close(); err != nil {
		b.Fatalf("Close: %v", err)
	}
	return dir
}

// fillBoard creates tenant t1's board s on h with settings s and submits
// n members to it in batches of 1,000.
func fillBoard(b *testing.B, h *Hub, n int, s Settings) {
	b.Helper()
	if _, err := h.PutBoard(benchCtx(b), "t1", "s", s); err != nil {
		b.Fatalf("PutBoard: %v", err)
	}
	items := make([]Item, 0, MaxBatch)
	for i := 0; i < n; i += MaxBatch {
		items = items[:0]
		for m := i; m < min(i+MaxBatch, n); m++ {
			items = append(items, Item{Member: "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)})
		}
		if _, err := h.Submit(benchCtx(b), "t1", "s", items); err != nil {
			b.Fatalf("Submit at %d: %v", i, err)
		}
	}
}

func boardMembers(b *testing.B, h *Hub) int {
	info, err := h.Board("t1", "s")
	if err != nil {
		b.Fatalf("Board: %v", err)
	}
	return info.Members
}

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

func sizeName(n int) string {
	e := 0
	for m := n; m >= 10 && m%10 == 0; m /= 10 {
		e++
	}
	return strconv.Itoa(n/pow10(e)) + "e" + strconv.Itoa(e)
}

func pow10(e int) int {
	p := 1
	for range e {
		p *= 10
	}
	return p
}

func writeFile(b *testing.B, path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

func removeFile(b *testing.B, path string) {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
}
