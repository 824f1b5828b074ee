package hub

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
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

// Ids are kept for the retention the events carry, counted from the
// events' acceptance times: a repeat within it answers as the original,
// one after it applies again; a node replaying the same stream keeps and
// forgets the same ids (same fingerprint); without a retention an id is
// kept for ever.
func TestIdempotencyRetention(t *testing.T) {
	url := startNATS(t)
	clk := newClock(date(2026, 3, 2))
	a := startHub(t, Config{Now: clk.now, NATSURL: url, IdempotencyRetention: 2 * time.Hour})
	mustPut(t, a, "t1", "b", Settings{Policy: "sum"})
	sub := func(id string) Result {
		t.Helper()
		return mustSubmit(t, a, "t1", "b", Item{Member: "p1", Score: 1, ID: id})[0]
	}
	if r := sub("x"); r.Duplicate || r.Score != 1 {
		t.Fatalf("first: %+v", r)
	}
	clk.set(date(2026, 3, 2).Add(90 * time.Minute))
	if r := sub("x"); !r.Duplicate || r.Score != 1 {
		t.Fatalf("a repeat within the retention: %+v, want the original", r)
	}
	clk.set(date(2026, 3, 2).Add(3 * time.Hour))
	if r := sub("x"); r.Duplicate || r.Score != 2 {
		t.Fatalf("a repeat after the retention: %+v, want applied again", r)
	}
	if r := sub("x"); !r.Duplicate || r.Score != 2 {
		t.Fatalf("and then kept again: %+v", r)
	}
	b := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	if _, err := b.replica(testCtx(t), "t1", false); err != nil {
		t.Fatal(err)
	}
	if string(fingerprint(t, a, "t1")) != string(fingerprint(t, b, "t1")) {
		t.Fatal("a node replaying the stream kept other ids")
	}

	c := startHub(t, Config{Now: clk.now}) // no retention
	mustPut(t, c, "t1", "b", Settings{Policy: "sum"})
	mustSubmit(t, c, "t1", "b", Item{Member: "p1", Score: 1, ID: "y"})
	clk.set(date(2027, 3, 2))
	if r := mustSubmit(t, c, "t1", "b", Item{Member: "p1", Score: 1, ID: "y"})[0]; !r.Duplicate {
		t.Fatalf("without a retention, a repeat a year later: %+v", r)
	}
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

// A submission that could take the tenant past the most member ids a
// board ranks is refused at ingest, naming member; one within it is
// applied.
func TestMemberLimitAtIngest(t *testing.T) {
	old := maxMembers
	maxMembers = 3
	t.Cleanup(func() { maxMembers = old })
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 1}, Item{Member: "p2", Score: 2})
	_, err := h.Submit(testCtx(t), "t1", "b", []Item{{Member: "p3", Score: 3}, {Member: "p4", Score: 4}})
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, ErrLimit) || !strings.HasPrefix(he.Msg, "member: ") {
		t.Fatalf("err = %v, want a limit naming member", err)
	}
	mustSubmit(t, h, "t1", "b", Item{Member: "p3", Score: 3})
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); len(got) != 3 {
		t.Fatalf("board %v", got)
	}
}
