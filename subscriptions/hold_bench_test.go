package subscriptions

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rankwire/rankwire/board"
)

// BenchmarkHeldAbandon is a reconnect storm through a lagging gateway: n
// subscriptions of one board-window held for a resume from the future give
// up together, each an Abandon (the owner's bound passed), in the order
// they were held (their timers' order) or in a random one. ns/abandon is
// the cost of one, the holds' setup not timed: flat in n where an Abandon
// is O(1) but for the processor's caches (10,000 holds outgrow them, and a
// random order misses them more), and growing with n while it scanned the
// held list (docs/BENCHMARKS.md, "Held resumes").
func BenchmarkHeldAbandon(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, order := range []string{"arrival", "random"} {
			b.Run(fmt.Sprintf("held=%d/order=%s", n, order), func(b *testing.B) {
				benchHeldAbandon(b, n, order == "random")
			})
		}
	}
}

func benchHeldAbandon(b *testing.B, n int, shuffle bool) {
	key := Key{"a", "weekly", "all"}
	w := newTestWindow(b, board.Config{})
	w.submit(b, "p0", 1)
	e := NewEngine(Config{})
	w.tick(e, key)
	rng := rand.New(rand.NewPCG(25, uint64(n)))
	var spent time.Duration
	done := 0
	for b.Loop() {
		b.StopTimer()
		subs := holdMany(b, e, key, w, newClient().out, n, 8)
		if shuffle {
			rng.Shuffle(n, func(i, j int) { subs[i], subs[j] = subs[j], subs[i] })
		}
		b.StartTimer()
		start := time.Now()
		for _, s := range subs {
			e.Abandon(s)
		}
		spent += time.Since(start)
		done += n
	}
	if e.Stats().Held != 0 {
		b.Fatalf("%d held after every Abandon", e.Stats().Held)
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(done), "ns/abandon")
}
