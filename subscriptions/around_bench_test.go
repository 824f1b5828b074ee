//go:build unix

package subscriptions

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// BenchmarkAroundTick is the engine's side of docs/BENCHMARKS.md's
// around-me shape: 2,000 players each watching its own neighbourhood
// (radius 5) of a 100,000-member board, one tick of 10 submissions (a
// batch) to members drawn uniformly, each scoring within its own slot so
// that no rank moves (as in the load test). Timed per op: Apply (the dirty
// views, their recomputation and diffs), Flush (one encoding per changed
// view, offered to its watcher) and the takes, with framing, of the
// watchers whose outbox called (as the writer pool takes them); the
// submissions to the board are not timed. msgs/change is how many
// messages a submission made: the ~0.22-0.29 views whose window shows the
// member, found through the rank index, never a look at the 2,000.
func BenchmarkAroundTick(b *testing.B) {
	const members, players, radius, batch = 100_000, 2_000, 5, 10
	w := newTestWindow(b, board.Config{})
	for i := range members { // member m<i> holds rank i+1: score members-i, ×10
		w.submit(b, fmt.Sprint("m", i), float64(members-i)*10)
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	outs := make([]*Outbox, players)
	var called []*Outbox // the outboxes that notified since the last takes
	for i := range outs {
		outs[i] = NewOutbox(0, func() { called = append(called, outs[i]) })
		m := fmt.Sprint("m", i*(members/players))
		if _, err := e.Subscribe(key, w, outs[i], "s", Spec{Kind: Around, Member: m, Radius: radius}, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, o := range outs { // the snapshots
		for _, ok := o.Next(); ok; _, ok = o.Next() {
		}
	}
	called = called[:0]
	r := rand.New(rand.NewPCG(1, 2))
	names := make([]string, members)
	for i := range names {
		names[i] = fmt.Sprint("m", i)
	}
	bump := make([]float64, members) // each member's score moves within (its slot, its slot + 10)
	pending := make([]Change, 0, batch)
	var frame []byte
	delivered := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		w.pending = pending[:0]
		for range batch {
			i := r.IntN(members)
			bump[i] = float64(int(bump[i]*8+1)%9) / 8
			w.submit(b, names[i], float64(members-i)*10+bump[i])
		}
		b.StartTimer()
		e.Apply(key, w, w.pending, false)
		e.Flush()
		for _, o := range called {
			for m, ok := o.Next(); ok; m, ok = o.Next() {
				frame = m.AppendTo(frame[:0])
				delivered++
			}
		}
		called = called[:0]
	}
	b.ReportMetric(float64(delivered)/float64(b.N*batch), "msgs/change")
}
