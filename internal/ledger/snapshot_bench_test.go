package ledger

import "testing"

// BenchmarkEncode times the replica goroutine's share of a periodic
// snapshot of a tenant with one board of N members: the encoding, for
// which apply waits (the hub's BenchmarkSnapshot times the save). The
// state is built outside the timer.
//
//	go test ./internal/ledger -run '^$' -bench 'Encode/N=1e6' -benchtime 3x
func BenchmarkEncode(b *testing.B) {
	for _, n := range []struct {
		name string
		n    int
	}{{"N=1e5", 100_000}, {"N=1e6", 1_000_000}} {
		b.Run(n.name, func(b *testing.B) {
			st := buildState(n.n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Encode(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
