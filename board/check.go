package board

import (
	"errors"
	"fmt"
)

// Check walks the whole structure and verifies every invariant: level 0
// links the leaves in strict order (within and across leaves), back links
// mirror next links, each leaf holds 1..limit entries and its tower holds
// its first key, every level's spans sum the entries they pass, each tower
// sits on exactly the levels below its height, the member index and the
// leaves agree, and the length matches. O(N log N). For tests: it
// allocates a map of towers.
func (b *Board) Check() error {
	before, err := b.checkLevel0()
	if err != nil {
		return err
	}
	for i := 1; i < b.level; i++ {
		if err := b.checkLevel(i, before); err != nil {
			return err
		}
	}
	if b.level > 1 {
		if next, _ := b.link(0, b.level-1); next == 0 {
			return fmt.Errorf("board: level %d is empty but in use", b.level)
		}
	}
	return b.checkIndex()
}

// checkLevel0 verifies the leaves, their order, back links and the length,
// returning the number of entries before each tower.
func (b *Board) checkLevel0() (map[uint32]int, error) {
	before := make(map[uint32]int)
	prev, r := uint32(0), 0
	var last key
	for x := b.next0(0); x != 0; prev, x = x, b.next0(x) {
		if _, seen := before[x]; seen || r > b.length {
			return nil, fmt.Errorf("board: level 0 loops or exceeds length %d", b.length)
		}
		before[x] = r
		if b.back(x) != prev {
			return nil, fmt.Errorf("board: rank %d: back link %d, want %d", r+1, b.back(x), prev)
		}
		if h := b.height(x); h < 1 || h > maxLevel {
			return nil, fmt.Errorf("board: rank %d: height %d", r+1, h)
		}
		l, n := b.leafOf(x), b.count(x)
		if n < 1 || n > b.limit {
			return nil, fmt.Errorf("board: rank %d: a leaf of %d entries", r+1, n)
		}
		if l.tower != x {
			return nil, fmt.Errorf("board: rank %d: the leaf names tower %d, not %d", r+1, l.tower, x)
		}
		if k := l.keyAt(0); b.cmp(x, &k) != 0 {
			return nil, fmt.Errorf("board: rank %d: the tower's key is not its leaf's first", r+1)
		}
		for j := range n {
			k := l.keyAt(j)
			if r > 0 && b.cmpKeys(&last, &k) >= 0 {
				return nil, fmt.Errorf("board: rank %d orders before rank %d", r+1, r)
			}
			last, r = k, r+1
		}
	}
	if r != b.length {
		return nil, fmt.Errorf("board: the leaves hold %d entries, length is %d", r, b.length)
	}
	if b.back(0) != prev {
		return nil, fmt.Errorf("board: tail is %d, want %d", b.back(0), prev)
	}
	return before, nil
}

// checkLevel verifies level i's spans and membership against level 0.
func (b *Board) checkLevel(i int, before map[uint32]int) error {
	want := 0
	for x := b.next0(0); x != 0; x = b.next0(x) {
		if b.height(x) > i {
			want++
		}
	}
	got, x, r := 0, uint32(0), 0
	for {
		next, span := b.link(x, i)
		if next == 0 {
			if span != b.length-r {
				return fmt.Errorf("board: level %d: last span %d, want %d", i, span, b.length-r)
			}
			break
		}
		nr, ok := before[next]
		if !ok || b.height(next) <= i || nr-r != span {
			return fmt.Errorf("board: level %d: link to rank %d spans %d, want %d (height %d)",
				i, nr+1, span, nr-r, b.height(next))
		}
		if got++; got > want {
			break
		}
		x, r = next, nr
	}
	if got != want {
		return fmt.Errorf("board: level %d links %d towers, %d are that tall", i, got, want)
	}
	return nil
}

// checkIndex verifies that the member index names exactly the entries'
// leaves.
func (b *Board) checkIndex() error {
	n := 0
	var bad error
	b.loc.each(func(m, id uint32) {
		n++
		if bad != nil {
			return
		}
		if id >= b.nextLeaf {
			bad = fmt.Errorf("board: index maps member %d to leaf %d, never allocated", m, id)
			return
		}
		l := b.leafAt(id)
		if x := l.tower; b.leafID(x) != id || l.slotOf(m, b.count(x)) < 0 {
			bad = fmt.Errorf("board: index maps member %d to a leaf not holding it", m)
		}
	})
	if bad != nil {
		return bad
	}
	if b.loc.dense == nil && b.loc.n != n {
		return errors.New("board: sparse index count is off")
	}
	if n != b.length {
		return fmt.Errorf("board: the index holds %d members, the leaves %d entries", n, b.length)
	}
	return nil
}
