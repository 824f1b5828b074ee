package board

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLargeBoardAgainstModel runs the real leaf size through thousands of
// members, so that leaves split, merge and empty as on a production board,
// comparing every row with the model at intervals.
func TestLargeBoardAgainstModel(t *testing.T) {
	s := seed(t)
	t.Logf("seed %d (set RANKWIRE_SEED to rerun)", s)
	rng := rand.New(rand.NewPCG(s, 99))
	cfg := Config{Policy: Latest, CompareMembers: nameOrder, Seed: rng.Uint64()}
	b, _ := New(cfg)
	m := newModel(cfg)
	const members, steps = 3000, 20000
	for i := range steps {
		member := uint32(1 + rng.IntN(members))
		switch op := rng.IntN(10); {
		case op < 7 || i < members:
			e := Entry{Member: member, Score: float64(rng.IntN(500)), Seq: uint64(i + 1)}
			if _, err := b.Submit(Submission(e)); err != nil {
				t.Fatal(err)
			}
			m.submit(e)
		default:
			b.Remove(member)
			delete(m.entries, member)
		}
		if i%2500 == 0 || i == steps-1 {
			if err := b.Check(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			want := m.rows()
			if got := b.Range(0, len(want)+1, nil); !slices.Equal(got, want) {
				t.Fatalf("step %d: rows differ from the model", i)
			}
			for _, w := range want[:min(len(want), 200)] {
				if r, ok := b.Get(w.Member); !ok || r != w {
					t.Fatalf("step %d: Get(%d) = %v, want %v", i, w.Member, r, w)
				}
			}
		}
	}
	if fill := float64(b.Len()) / float64(b.leafCount()); fill < leafCap/3 {
		t.Errorf("leaves hold %.1f entries on average, want at least %d", fill, leafCap/3)
	}
}

func (b *Board) leafCount() int {
	n := 0
	for x := b.next0(0); x != 0; x = b.next0(x) {
		n++
	}
	return n
}

// Check catches each kind of damage: the invariant checker is itself tested.
func TestCheckCatchesDamage(t *testing.T) {
	build := func() *Board {
		b, _ := New(Config{Seed: 7})
		b.limit = 4
		for m := uint32(1); m <= 60; m++ {
			if _, err := b.Submit(Submission{Member: m, Score: float64(m % 17), Seq: uint64(m)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
		return b
	}
	tall := func(b *Board) uint32 {
		for x := b.next0(0); x != 0; x = b.next0(x) {
			if b.height(x) > 1 {
				return x
			}
		}
		t.Fatal("no tower above level 0")
		return 0
	}
	second := func(b *Board) uint32 { return b.next0(b.next0(0)) }
	for name, damage := range map[string]func(b *Board){
		"span":      func(b *Board) { b.addSpan(tall(b), 1, 1) },
		"count":     func(b *Board) { x := second(b); b.setCount(x, b.count(x)-1) },
		"tower key": func(b *Board) { b.words[second(b)+wSeq]++ },
		"leaf order": func(b *Board) {
			l := b.leafOf(second(b))
			k0, k1 := l.keyAt(0), l.keyAt(1)
			l.put(0, &k1)
			l.put(1, &k0)
			b.writeKey(second(b), &k1)
		},
		"back link":   func(b *Board) { b.setBack(second(b), 0) },
		"index":       func(b *Board) { b.loc.set(5, b.leafID(b.next0(0))+1) },
		"index extra": func(b *Board) { b.loc.set(100, b.leafID(b.next0(0))) },
		"length":      func(b *Board) { b.length++ },
	} {
		b := build()
		damage(b)
		if err := b.Check(); err == nil {
			t.Errorf("%s: Check passed a damaged board", name)
		}
	}
}
