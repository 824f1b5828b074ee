package board

import (
	"errors"
	"fmt"
)

// Check walks the whole structure and verifies every invariant: level 0 is
// strictly ordered, back links mirror next links, every level's spans sum
// to the level-0 distance, each node sits on exactly the levels below its
// height, the member index and the list agree, and the length matches.
// O(N log N). For tests: it allocates a rank map.
func (b *Board) Check() error {
	ranks, err := b.checkLevel0()
	if err != nil {
		return err
	}
	for i := 1; i < b.level; i++ {
		if err := b.checkLevel(i, ranks); err != nil {
			return err
		}
	}
	if b.level > 1 {
		if next, _ := b.link(0, b.level-1); next == 0 {
			return fmt.Errorf("board: level %d is empty but in use", b.level)
		}
	}
	return b.checkIndex(ranks)
}

// checkLevel0 verifies order, back links and length, returning node ranks.
func (b *Board) checkLevel0() (map[uint32]int, error) {
	ranks := make(map[uint32]int, b.length)
	prev, r := uint32(0), 0
	for x := b.next0(0); x != 0; prev, x = x, b.next0(x) {
		r++
		if _, seen := ranks[x]; seen || r > b.length {
			return nil, fmt.Errorf("board: level 0 loops or exceeds length %d", b.length)
		}
		ranks[x] = r
		if b.back(x) != prev {
			return nil, fmt.Errorf("board: rank %d: back link %d, want %d", r, b.back(x), prev)
		}
		pk := b.nodeKey(prev)
		if prev != 0 && b.cmp(x, &pk) <= 0 {
			return nil, fmt.Errorf("board: rank %d orders before rank %d", r, r-1)
		}
		if h := b.height(x); h < 1 || h > maxLevel {
			return nil, fmt.Errorf("board: rank %d: height %d", r, h)
		}
	}
	if r != b.length {
		return nil, fmt.Errorf("board: level 0 holds %d nodes, length is %d", r, b.length)
	}
	if b.back(0) != prev {
		return nil, fmt.Errorf("board: tail is %d, want %d", b.back(0), prev)
	}
	return ranks, nil
}

// checkLevel verifies level i's spans and membership against level-0 ranks.
func (b *Board) checkLevel(i int, ranks map[uint32]int) error {
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
		nr, ok := ranks[next]
		if !ok || b.height(next) <= i || nr-r != span {
			return fmt.Errorf("board: level %d: link to rank %d spans %d, want %d (height %d)",
				i, nr, span, nr-r, b.height(next))
		}
		if got++; got > want {
			break
		}
		x, r = next, nr
	}
	if got != want {
		return fmt.Errorf("board: level %d links %d nodes, %d are that tall", i, got, want)
	}
	return nil
}

// checkIndex verifies that the member index names exactly the listed nodes.
func (b *Board) checkIndex(ranks map[uint32]int) error {
	n := 0
	var bad error
	b.loc.each(func(m, x uint32) {
		n++
		if _, ok := ranks[x]; bad == nil && (!ok || b.member(x) != m) {
			bad = fmt.Errorf("board: index maps member %d to a node not holding it", m)
		}
	})
	if bad != nil {
		return bad
	}
	for x := range ranks {
		if b.loc.get(b.member(x)) != x {
			return fmt.Errorf("board: member %d's node is not in the index", b.member(x))
		}
	}
	if b.loc.dense == nil && b.loc.n != n {
		return errors.New("board: sparse index count is off")
	}
	if n != b.length {
		return errors.New("board: index and list disagree in size")
	}
	return nil
}
