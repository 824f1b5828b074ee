package ledger

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// BenchmarkApply times the replica goroutine's share of a submission: apply
// of group events of 1,000 items (10 calls of 100, as group commit makes
// them) to one board of 1,000,000 members, each item moving a random
// member (policy best, rising scores) or adding a new one. Decoding is not
// included: the hub's fetcher goroutine does it ahead (hub/follow.go).
// ns/op is per item.
//
//	go test ./internal/ledger -run '^$' -bench 'Apply' -benchtime 1000000x -count 3
func BenchmarkApply(b *testing.B) {
	const n = 1_000_000
	for _, shape := range []string{"move", "insert"} {
		b.Run(shape, func(b *testing.B) {
			st := buildState(n)
			st.RecordFeed()
			rng := rand.New(rand.NewPCG(1, 2))
			evs := make([]*Event, 64)
			next := n
			for i := range evs {
				ev := &Event{Kind: EvGroup, At: 1, Groups: make([]Group, 10)}
				for g := range ev.Groups {
					items := make([]Item, 100)
					for j := range items {
						m := rng.IntN(n)
						if shape == "insert" {
							m, next = next, next+1
						}
						items[j] = Item{Member: "m" + strconv.Itoa(m), Score: 2_000_000 + float64(rng.IntN(1_000_000))}
					}
					ev.Groups[g] = Group{Board: "s", Items: items}
				}
				ev.Prepare()
				evs[i] = ev
			}
			seq := st.seq
			b.ResetTimer()
			for i := 0; i < b.N; i += 1000 {
				seq++
				st.Apply(seq, evs[(i/1000)%len(evs)])
				if i%64000 == 63000 {
					st.RecordFeed() // the live-view feed is drained by its consumer in the gateway
				}
			}
		})
	}
}

// BenchmarkApplyLanes times apply of group events whose 10 groups of 100
// items go to 4 boards of 250,000 members each (moves, as BenchmarkApply),
// with the lanes (apply_lanes.go) and without, in the same run. ns/op is
// per item.
//
//	go test ./internal/ledger -run '^$' -bench 'ApplyLanes' -benchtime 1000000x -count 3
func BenchmarkApplyLanes(b *testing.B) {
	const perBoard = 250_000
	boards := []string{"b0", "b1", "b2", "b3"}
	for _, parallel := range []bool{false, true} {
		b.Run(map[bool]string{false: "sequential", true: "lanes"}[parallel], func(b *testing.B) {
			st := New()
			if parallel {
				st.SetLanes(goLanes)
			}
			st.RecordFeed()
			seq := uint64(0)
			for _, name := range boards {
				set, _ := Settings{}.normalize()
				seq++
				st.Apply(seq, &Event{Kind: EvSettings, Board: name, Settings: &set})
				for i := 0; i < perBoard; i += MaxBatch {
					items := make([]Item, 0, MaxBatch)
					for m := i; m < i+MaxBatch; m++ {
						items = append(items, Item{Member: name + "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)})
					}
					seq++
					st.Apply(seq, &Event{Kind: EvSubmit, Board: name, Items: items})
				}
			}
			st.feed = nil // no live views: the feed's lock is not what is measured
			rng := rand.New(rand.NewPCG(1, 2))
			evs := make([]*Event, 64)
			for i := range evs {
				ev := &Event{Kind: EvGroup, At: 1, Groups: make([]Group, 10)}
				for g := range ev.Groups {
					name := boards[rng.IntN(len(boards))]
					items := make([]Item, 100)
					for j := range items {
						items[j] = Item{Member: name + "m" + strconv.Itoa(rng.IntN(perBoard)), Score: 2_000_000 + float64(rng.IntN(1_000_000))}
					}
					ev.Groups[g] = Group{Board: name, Items: items}
				}
				ev.Prepare()
				evs[i] = ev
			}
			b.ResetTimer()
			for i := 0; i < b.N; i += 1000 {
				seq++
				st.Apply(seq, evs[(i/1000)%len(evs)])
				if i%64000 == 63000 {
					st.feed = nil
				}
			}
		})
	}
}

// BenchmarkRandomReads is the machine's floor for cache-cold work on
// several cores: dependent random reads (a pointer chase through 256 MiB)
// on 1 and on GOMAXPROCS goroutines at once. ns/op is per read per
// goroutine; if it grows with the goroutines, the cores share what a miss
// waits for and cache-cold apply cannot scale on them.
//
//	go test ./internal/ledger -run '^$' -bench 'RandomReads' -benchtime 20000000x -count 3
func BenchmarkRandomReads(b *testing.B) {
	const n = 32 << 20 // uint64s: 256 MiB
	next := make([]uint64, n)
	perm := rand.New(rand.NewPCG(3, 4)).Perm(n)
	for i := range n - 1 {
		next[perm[i]] = uint64(perm[i+1])
	}
	next[perm[n-1]] = uint64(perm[0])
	for _, g := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			var wg sync.WaitGroup
			sink := make([]uint64, g)
			b.ResetTimer()
			for w := range g {
				wg.Go(func() {
					x := uint64(perm[w*1000])
					for range b.N {
						x = next[x]
					}
					sink[w] = x
				})
			}
			wg.Wait()
		})
	}
}
