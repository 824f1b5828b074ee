package hub

import (
	"strconv"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// BenchmarkSnapshot times the saver goroutine's half of a periodic
// snapshot of a tenant with one board of N members: save (write, fsync,
// rename). The encoding, which the replica goroutine does, is
// internal/ledger's BenchmarkEncode. The state is built by apply directly,
// without NATS, outside the timer.
//
//	go test ./hub -run '^$' -bench 'Snapshot/N=1e6' -benchtime 3x
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run("N="+sizeName(n)+"/save", func(b *testing.B) {
			data, err := buildState(n).Encode(nil)
			if err != nil {
				b.Fatal(err)
			}
			s := snapfile.Files{Dir: b.TempDir()}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Save("t1", data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data))/float64(n), "B/member")
		})
	}
}

// buildState returns a state with board s of n members, applied in
// batches of 1,000 as BenchmarkRestart submits them.
func buildState(n int) *ledger.State {
	st := ledger.New()
	set, _ := Settings{}.Normalize()
	st.Apply(1, &ledger.Event{Kind: ledger.EvSettings, Board: "s", Settings: &set})
	items := make([]Item, 0, MaxBatch)
	for i := 0; i < n; i += MaxBatch {
		items = items[:0]
		for m := i; m < min(i+MaxBatch, n); m++ {
			items = append(items, Item{Member: "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)})
		}
		st.Apply(uint64(2+i/MaxBatch), &ledger.Event{Kind: ledger.EvSubmit, Board: "s", Items: items})
	}
	return st
}
