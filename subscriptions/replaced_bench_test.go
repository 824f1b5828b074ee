package subscriptions

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// BenchmarkReplacedMessage reports the size of the message that replaces a
// slow client's pending one (a catch-up diff where the ring reaches back,
// diff-B) against the snapshot that replaced it before (snapshot-B), over a
// 1,000-member board whose client reads every other tick. Shapes:
//
//   - top10-new-leader: a top-10 view, one submission a tick, one in ten a
//     new best score (every rank of the view shifts: a full diff);
//   - top100-small-moves: a top-100 view, each tick one member of ranks
//     1..100 improving by a little (it passes a few others).
func BenchmarkReplacedMessage(b *testing.B) {
	for _, shape := range []string{"top10-new-leader", "top100-small-moves"} {
		b.Run(shape, func(b *testing.B) {
			w := newTestWindow(b, board.Config{})
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 1000 {
				w.submit(b, fmt.Sprint("p", i), float64(i*100))
			}
			e := NewEngine(Config{})
			key := Key{"t", "b", "all"}
			w.tick(e, key)
			c := newClient()
			limit := 10
			if shape == "top100-small-moves" {
				limit = 100
			}
			if _, err := e.Subscribe(key, w, c.out, "s", Spec{Kind: Top, Limit: limit}, nil); err != nil {
				b.Fatal(err)
			}
			c.drain(b)
			best := 1e6
			var diffBytes, snapBytes, replaced int
			var coalesced uint64
			for i := range b.N {
				if limit == 10 {
					member, score := rng.IntN(1000), float64(rng.IntN(100_000))
					if rng.IntN(10) == 0 {
						best++
						score = best
					}
					w.submit(b, fmt.Sprint("p", member), score)
				} else {
					r, _ := w.b.At(1 + rng.IntN(100))
					name, _ := w.Name(r.Member)
					w.submit(b, name, r.Score+float64(50+rng.IntN(250)))
				}
				w.tick(e, key)
				if i%2 == 0 {
					continue // the client is slow: the next tick replaces this message
				}
				m, ok := c.out.Next()
				if !ok {
					continue
				}
				raw := m.AppendTo(nil)
				c.apply(b, raw)
				now := e.coalesced.Load()
				if now > coalesced { // this message replaced one
					diffBytes += len(raw)
					snapBytes += len(Message{sub: m.sub, sh: m.sub.v.snapshot()}.AppendTo(nil))
					replaced++
				}
				coalesced = now
			}
			if replaced > 0 {
				b.ReportMetric(float64(diffBytes)/float64(replaced), "replaced-B")
				b.ReportMetric(float64(snapBytes)/float64(replaced), "snapshot-B")
			}
		})
	}
}
