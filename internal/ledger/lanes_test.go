package ledger

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The lanes give exactly what applying the groups one after another gives:
// the same results, errors, duplicates, handles and snapshot bytes, under
// random group events over several boards (one of them missing), with
// repeated ids inside and across events, members new and old, a
// retention, and windows.
func TestLanesMatchSequentialApply(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 99))
		seqSt, parSt := New(), New()
		var seqOut, parOut []Outcome
		parSt.SetLanes(goLanes)
		apply := func(seq uint64, ev *Event, parallel bool) Outcome {
			if parallel {
				return parSt.Apply(seq, ev)
			}
			return seqSt.Apply(seq, ev)
		}
		boards := []string{"a", "b", "c"}
		for i, b := range boards {
			set, _ := Settings{Policy: []string{"best", "sum", "latest"}[i], Windows: []string{"all", "day"}}.normalize()
			ev := &Event{Kind: EvSettings, Board: b, Settings: &set}
			apply(uint64(i+1), ev, false)
			apply(uint64(i+1), ev, true)
		}
		seq := uint64(len(boards))
		at := int64(1_700_000_000_000)
		for range 60 {
			seq++
			at += int64(rng.IntN(3_600_000))
			ev := &Event{Kind: EvGroup, At: at, KeepIDs: int64(rng.IntN(2)) * 3 * 3_600_000}
			for range 1 + rng.IntN(6) {
				g := Group{Board: []string{"a", "b", "c", "missing"}[rng.IntN(4)]}
				for range 1 + rng.IntN(150) {
					it := Item{Member: fmt.Sprint("p", rng.IntN(300)), Score: float64(rng.IntN(1000))}
					if rng.IntN(3) > 0 {
						it.ID = fmt.Sprint("id", rng.IntN(400))
					}
					g.Items = append(g.Items, it)
				}
				ev.Groups = append(ev.Groups, g)
			}
			if rng.IntN(2) == 0 {
				ev.Prepare() // digests ahead, as the fetcher does; else apply computes them
			}
			seqOut = append(seqOut, apply(seq, ev, false))
			parOut = append(parOut, apply(seq, ev, true))
		}
		if !reflect.DeepEqual(seqOut, parOut) {
			for i := range seqOut {
				if !reflect.DeepEqual(seqOut[i], parOut[i]) {
					t.Fatalf("seed %d event %d: sequential %+v\nparallel %+v", seed, i, seqOut[i], parOut[i])
				}
			}
		}
		a, err := seqSt.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parSt.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: snapshots differ (%d and %d bytes)", seed, len(a), len(b))
		}
	}
}
