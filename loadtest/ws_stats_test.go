package loadtest

import "testing"

// TestWSStatsSums: each total adds its own counter over every shard, none
// another's: shard i holds i+1 times a counter's own weight.
func TestWSStatsSums(t *testing.T) {
	s := newWSStats()
	for i := range s.shards {
		sh, n := &s.shards[i], int64(i+1)
		sh.messages.Add(1 * n)
		sh.bytes.Add(2 * n)
		sh.wire.Add(3 * n)
		sh.deltas.Add(4 * n)
		sh.deltaBytes.Add(5 * n)
		sh.heartbeats.Add(6 * n)
		sh.heartbeatBytes.Add(7 * n)
		sh.heartbeatWire.Add(8 * n)
	}
	const all = statShards * (statShards + 1) / 2 // 1 + 2 + ... + statShards
	m, b := s.totals()
	w, d, db := s.wireBytes()
	h, hb, hw := s.heartbeatTotals()
	got := []int64{m, b, w, d, db, h, hb, hw}
	for k, g := range got {
		if want := int64(k+1) * all; g != want {
			t.Fatalf("total %d is %d, want %d (all: %v)", k, g, want, got)
		}
	}
}
