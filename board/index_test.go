package board

import (
	"math/rand/v2"
	"testing"
)

// The member index against a map, under random sets and deletes, with
// handles spread over the whole range (sparse) and packed (turning dense).
func TestMemberIndexModel(t *testing.T) {
	for _, spread := range []uint32{MaxMember, 3000} {
		rng := rand.New(rand.NewPCG(uint64(spread), 1))
		var ix memberIndex
		ref := map[uint32]uint32{}
		keys := []uint32{}
		for i := range 50_000 {
			switch op := rng.IntN(10); {
			case op < 6 || len(keys) == 0:
				h := uint32(rng.Uint64N(uint64(spread) + 1))
				x := uint32(i + 1)
				ix.set(h, x)
				if _, ok := ref[h]; !ok {
					keys = append(keys, h)
				}
				ref[h] = x
			case op < 9:
				j := rng.IntN(len(keys))
				h := keys[j]
				keys[j] = keys[len(keys)-1]
				keys = keys[:len(keys)-1]
				ix.del(h)
				delete(ref, h)
			default: // a handle that is probably absent
				h := uint32(rng.Uint64N(uint64(spread) + 1))
				ix.del(h)
				if _, ok := ref[h]; ok {
					delete(ref, h)
					for j, k := range keys {
						if k == h {
							keys[j] = keys[len(keys)-1]
							keys = keys[:len(keys)-1]
							break
						}
					}
				}
			}
			if i%997 == 0 {
				checkIndexAgainst(t, &ix, ref)
			}
		}
		checkIndexAgainst(t, &ix, ref)
		if dense := ix.dense != nil; dense != (spread == 3000) {
			t.Errorf("spread %d: dense %v", spread, dense)
		}
	}
}

func checkIndexAgainst(t *testing.T, ix *memberIndex, ref map[uint32]uint32) {
	t.Helper()
	n := 0
	ix.each(func(h, x uint32) {
		n++
		if ref[h] != x {
			t.Fatalf("index has %d -> %d, reference %d", h, x, ref[h])
		}
	})
	if n != len(ref) {
		t.Fatalf("index holds %d, reference %d", n, len(ref))
	}
	for h, x := range ref {
		if got := ix.get(h); got != x {
			t.Fatalf("get(%d) = %d, want %d", h, got, x)
		}
	}
}

// A board of a few members with handles anywhere below MaxMember costs
// bytes per entry, not per handle, and stays consistent (Check) through
// submissions and removals.
func TestSparseHandlesBoard(t *testing.T) {
	b, _ := New(Config{Policy: Best})
	rng := rand.New(rand.NewPCG(5, 5))
	var hs []uint32
	for i := range 2000 {
		h := uint32(rng.Uint64N(MaxMember))
		if _, err := b.Submit(Submission{Member: h, Score: float64(rng.IntN(100)), Seq: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		if i%3 == 0 {
			b.Remove(hs[rng.IntN(len(hs))])
		}
		if i%100 == 0 {
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	if per := b.loc.bytes() / b.Len(); per > 32 {
		t.Fatalf("index %d bytes per entry with sparse handles", per)
	}
}
