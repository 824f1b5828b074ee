package ledger

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// seenIDs against a reference: a map of id → acceptance time and a list
// in applied order, under random puts and expiries.
func TestSeenIDsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	s := newSeenIDs()
	ref := map[string]int64{}
	var order []string
	at := int64(0)
	for i := range 20000 {
		at += int64(rng.IntN(10)) - 2 // mostly forward, sometimes back: clocks of two nodes
		id := fmt.Sprint("id-", rng.IntN(3000))
		if rng.IntN(10) == 0 {
			before := at - int64(rng.IntN(500))
			s.expire(before)
			for len(order) > 0 && ref[order[0]] < before {
				delete(ref, order[0])
				order = order[1:]
			}
		} else if _, ok := ref[id]; !ok {
			s.put(digestID(id), at, Result{Member: id, Seq: uint64(i)})
			ref[id] = at
			order = append(order, id)
		}
		if s.len() != len(ref) {
			t.Fatalf("step %d: %d ids kept, reference %d", i, s.len(), len(ref))
		}
	}
	for id := range ref {
		if r, ok := s.get(digestID(id)); !ok || r.Member != id {
			t.Fatalf("%s lost: %+v %v", id, r, ok)
		}
	}
	i := 0
	s.each(func(d idDigest, _ seenEntry) {
		if d != digestID(order[i]) {
			t.Fatalf("order %d differs", i)
		}
		i++
	})
}

// BenchmarkSeenIDs reports the heap each kept idempotency id costs, ids of
// 36 bytes (a UUID), and the cost of one check-and-record.
func BenchmarkSeenIDs(b *testing.B) {
	const n = 1_000_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	s := newSeenIDs()
	for i, id := range ids {
		s.put(digestID(id), int64(i), Result{Member: "shared", Rank: i})
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	perID := float64(m1.HeapAlloc-m0.HeapAlloc) / n
	b.ResetTimer()
	for i := range b.N {
		d := digestID(ids[i%n])
		if _, ok := s.get(d); !ok {
			b.Fatal("lost")
		}
	}
	b.ReportMetric(perID, "B/id") // after the loop: ResetTimer drops reported metrics
	runtime.KeepAlive(s)
}
