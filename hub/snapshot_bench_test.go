package hub

import (
	"strconv"
	"testing"
)

// BenchmarkSnapshot times the two halves of a periodic snapshot of a tenant
// with one board of N members: encode, which the replica goroutine does
// (apply waits for it), and save (write, fsync, rename), which the saver
// goroutine does. The state is built by apply directly, without NATS,
// outside the timer.
//
//	go test ./hub -run '^$' -bench 'Snapshot/N=1e6' -benchtime 3x
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run("N="+sizeName(n), func(b *testing.B) {
			st := buildState(n)
			b.Run("encode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := encodeState(st); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("save", func(b *testing.B) {
				data, _ := encodeState(st)
				s := &snapshotter{dir: b.TempDir()}
				b.ReportAllocs()
				for b.Loop() {
					if err := s.save("t1", data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(data))/float64(n), "B/member")
			})
		})
	}
}

// buildState returns a state with board s of n members, applied in
// batches of 1,000 as BenchmarkRestart submits them. Benchmarks and tests
// share it.
func buildState(n int) *state {
	st := newState()
	set, _ := Settings{}.normalize()
	st.apply(1, &event{Kind: evSettings, Board: "s", Settings: &set})
	items := make([]Item, 0, MaxBatch)
	for i := 0; i < n; i += MaxBatch {
		items = items[:0]
		for m := i; m < min(i+MaxBatch, n); m++ {
			items = append(items, Item{Member: "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)})
		}
		st.apply(uint64(2+i/MaxBatch), &event{Kind: evSubmit, Board: "s", Items: items})
	}
	return st
}
