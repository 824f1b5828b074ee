package hub

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkApply times the replica goroutine's share of a submission: apply
// of group events of 1,000 items (10 calls of 100, as group commit makes
// them) to one board of 1,000,000 members, each item moving a random
// member (policy best, rising scores) or adding a new one. Decoding is not
// included: the fetcher goroutine does it ahead (follow.go). ns/op is per
// item.
//
//	go test ./hub -run '^$' -bench 'Apply' -benchtime 1000000x -count 3
func BenchmarkApply(b *testing.B) {
	const n = 1_000_000
	for _, shape := range []string{"move", "insert"} {
		b.Run(shape, func(b *testing.B) {
			st := buildState(n)
			st.feed = newFeedLog()
			rng := rand.New(rand.NewPCG(1, 2))
			evs := make([]*event, 64)
			next := n
			for i := range evs {
				ev := &event{Kind: evGroup, At: 1, Groups: make([]group, 10)}
				for g := range ev.Groups {
					items := make([]Item, 100)
					for j := range items {
						m := rng.IntN(n)
						if shape == "insert" {
							m, next = next, next+1
						}
						items[j] = Item{Member: "m" + strconv.Itoa(m), Score: 2_000_000 + float64(rng.IntN(1_000_000))}
					}
					ev.Groups[g] = group{Board: "s", Items: items}
				}
				ev.prepare()
				evs[i] = ev
			}
			seq := st.seq
			b.ResetTimer()
			for i := 0; i < b.N; i += 1000 {
				seq++
				st.apply(seq, evs[(i/1000)%len(evs)])
				if i%64000 == 63000 {
					st.feed = newFeedLog() // the live-view feed is drained by its consumer in the gateway
				}
			}
		})
	}
}
