//go:build unix

package subscriptions

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// BenchmarkFlushWatchers is the engine's side of a tick at many watchers of
// one view (docs/BENCHMARKS.md, shape 2: 10,000 watchers of one top 10):
// per op, one submission takes the lead, the tick offers the view's diff
// to every watcher, and a writer takes the messages of every other watcher
// (half are behind, as at 10,000 subscribers on two cores, where 43–72 %
// of the states reached each one before chains: the next ticks chain on to
// what waits for them, up to MaxChain, and then replace it). Each outbox's notify marks a connection of its own, as the
// writer pool's schedule does (a CAS on the connection's state, another
// cache line). ns/watcher is the op's time per watcher: the offers, the
// chained and replaced ones, the notifies and the takes with their framing;
// cpu-ns/watcher the same in the process's CPU time (getrusage), which a
// shared, busy machine disturbs less than the wall clock.
func BenchmarkFlushWatchers(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("watchers=%d", n), func(b *testing.B) {
			w := newTestWindow(b, board.Config{})
			for i := range 10 {
				w.submit(b, fmt.Sprint("p", i), float64(i))
			}
			e := NewEngine(Config{})
			key := Key{"t", "b", "all"}
			w.tick(e, key)
			outs := make([]*Outbox, n)
			conns := make([]*atomic.Int32, n)
			for i := range outs {
				c := new(atomic.Int32)
				conns[i] = c
				outs[i] = NewOutbox(0, func() { c.CompareAndSwap(0, 1) })
				if _, err := e.Subscribe(key, w, outs[i], "s", Spec{Kind: Top, Limit: 10}, nil); err != nil {
					b.Fatal(err)
				}
			}
			var frame []byte
			best := 100.0
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for i := range b.N {
				best++
				w.submit(b, fmt.Sprint("p", i%10), best)
				w.tick(e, key)
				for j := i % 2; j < n; j += 2 {
					conns[j].Store(0)
					for m, ok := outs[j].Next(); ok; m, ok = outs[j].Next() {
						frame = m.AppendTo(frame[:0])
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/watcher")
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N)/float64(n), "cpu-ns/watcher")
		})
	}
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("getrusage:", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
