package board

import (
	"fmt"
	"math"
)

// Board is one board-window's ranked set. Create it with New or Decode.
// Not safe for concurrent use: see the package doc.
type Board struct {
	cfg        Config
	words      []uint64             // towers: header at 0, then records (tower.go)
	loc        memberIndex          // member handle → leaf id (index.go)
	free       [maxLevel + 1]uint32 // freed towers by height, linked through next0
	chunks     [heightClasses]chunk
	leaves     [][]leaf // leaf pages (leaf.go)
	freeLeaves []uint32
	nextLeaf   uint32
	limit      int // the entries a leaf holds at most: leafCap, less in tests
	level      int // levels in use, 1..maxLevel; the header's links above are unused
	length     int
	rng        uint64
}

// New returns an empty board with the given settings.
func New(cfg Config) (*Board, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := &Board{cfg: cfg, level: 1, rng: cfg.Seed, limit: leafCap}
	if b.rng == 0 {
		b.rng = 1
	}
	b.words = make([]uint64, headerSize)
	b.words[wMember] = maxLevel << 32
	return b, nil
}

// Config returns the board's settings.
func (b *Board) Config() Config { return b.cfg }

// Len returns the number of entries. O(1).
func (b *Board) Len() int { return b.length }

// Grow reserves room for n more entries, with handles up to Len()+n, so
// that building a board of known size allocates little more.
func (b *Board) Grow(n int) {
	if n <= 0 {
		return
	}
	b.loc.reserve(n, b.length+n)
	// Leaves average about two thirds full; a tower averages 5 + 4/3 words.
	towers := n/(b.limit*2/3) + 1
	b.words = grow(b.words, towers*32/5+heightClasses*int(chunkSize(b.length+n)))
	b.leaves = grow(b.leaves, towers/bigPageLeaves+1)
}

func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	t := make([]T, len(s), len(s)+n)
	copy(t, s)
	return t
}

// slot finds member's entry: its tower and its slot in the tower's leaf.
func (b *Board) slot(member uint32) (x uint32, j int, ok bool) {
	id := b.loc.get(member)
	if id == 0 {
		return 0, 0, false
	}
	l := b.leafAt(id)
	return l.tower, l.slotOf(member, b.count(l.tower)), true
}

// Submit applies s under the board's policy and reports what moved.
// O(log N). An error (a non-finite score, or a sum that overflows) leaves the
// board unchanged.
func (b *Board) Submit(s Submission) (Change, error) {
	if err := checkFinite(s.Score, s.Subscore); err != nil {
		return Change{}, fmt.Errorf("member %d: %w", s.Member, err)
	}
	if s.Member > MaxMember {
		return Change{}, fmt.Errorf("member %d: %w", s.Member, ErrBadMember)
	}
	// Adding +0 turns -0 into +0, as the order treats them.
	e := Entry{Member: s.Member, Score: s.Score + 0, Subscore: s.Subscore + 0, Seq: s.Seq}
	x, j, ok := b.slot(s.Member)
	if !ok {
		return b.insert(e)
	}
	old := b.entryOf(b.leafOf(x), j)
	next, applied, err := b.apply(old, e)
	if err != nil {
		return Change{}, fmt.Errorf("member %d: %w", s.Member, err)
	}
	c, err := b.replace(x, j, old, next)
	c.Applied = applied
	return c, err
}

func checkFinite(score, subscore float64) error {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return ErrBadScore
	}
	if math.IsNaN(subscore) || math.IsInf(subscore, 0) {
		return ErrBadSubscore
	}
	return nil
}

// insert adds e for a member that has no entry.
func (b *Board) insert(e Entry) (Change, error) {
	k := b.keyOf(e)
	r, err := b.add(&k)
	if err != nil {
		return Change{}, err
	}
	return Change{Member: e.Member, NewRank: r, New: e, Applied: true}, nil
}

// add places key k, whose member has no entry, and returns its rank. A
// full leaf splits first; the first entry of an empty board makes a leaf.
func (b *Board) add(k *key) (int, error) {
	var p path
	x := b.locate(k, &p)
	if x == 0 {
		h := b.randomHeight()
		y, err := b.allocTower(h)
		if err != nil {
			return 0, err
		}
		b.writeKey(y, k)
		b.linkAfter(y, h, &p, 0)
		x = b.locate(k, &p)
	}
	// A full leaf passes its last entry to a next leaf with room, as a
	// B*-tree does, and splits only where that fails: leaves stay about
	// four fifths full instead of two thirds.
	for tries := 0; b.count(x) == b.limit; tries++ {
		if tries > 0 || !b.spill(x, &p) {
			if err := b.split(x, &p); err != nil {
				return 0, err
			}
		}
		x = b.locate(k, &p)
	}
	l, n := b.leafOf(x), b.count(x)
	j := b.countPreceding(l, n, k, false)
	l.move(j+1, l, j, n-j)
	l.put(j, k)
	b.setCount(x, n+1)
	if j == 0 {
		b.writeKey(x, k)
	}
	for i := 1; i < b.level; i++ {
		b.addSpan(p.prev[i], i, 1)
	}
	b.length++
	b.loc.set(k.member, b.leafID(x))
	return p.rank[0] + j + 1, nil
}

// spill moves the last entry of tower x's leaf to the front of the next
// leaf, where that leaf has room for it and one more, and reports whether
// it did. p is the path to x. The links into the next tower now end one
// entry earlier, and its own links pass one more.
func (b *Board) spill(x uint32, p *path) bool {
	y := b.next0(x)
	if y == 0 || b.count(y) > b.limit-2 {
		return false
	}
	lx, ly := b.leafOf(x), b.leafOf(y)
	nx, ny := b.count(x), b.count(y)
	ly.move(1, ly, 0, ny)
	ly.move(0, lx, nx-1, 1)
	b.setCount(x, nx-1)
	b.setCount(y, ny+1)
	k := ly.keyAt(0)
	b.writeKey(y, &k)
	b.loc.set(k.member, b.leafID(y))
	for i := 1; i < b.height(y); i++ {
		b.addSpan(p.prev[i], i, -1)
		b.addSpan(y, i, 1)
	}
	return true
}

// split moves the upper half of tower x's full leaf into a new tower linked
// after x, whose height is drawn. p is the path to x; it is stale after.
func (b *Board) split(x uint32, p *path) error {
	h := b.randomHeight()
	y, err := b.allocTower(h)
	if err != nil {
		return err
	}
	n := b.count(x)
	keep := n / 2
	lx, ly := b.leafOf(x), b.leafOf(y)
	ly.move(0, lx, keep, n-keep)
	b.setCount(x, keep)
	b.setCount(y, n-keep)
	k := ly.keyAt(0)
	b.writeKey(y, &k)
	id := b.leafID(y)
	for _, m := range ly.member[:n-keep] {
		b.loc.set(m, id)
	}
	b.linkAfter(y, h, p, p.rank[0]+keep)
	return nil
}

// removeSlot deletes slot j of tower x's leaf; p is the path to x. A leaf
// left empty is unlinked; one left half full or less takes in the next
// leaf where both fit in three quarters of a leaf, so that leaves stay
// full enough for memory to follow the entries.
func (b *Board) removeSlot(x uint32, j int, p *path) {
	l, n := b.leafOf(x), b.count(x)
	b.loc.del(l.member[j])
	l.move(j, l, j+1, n-j-1)
	b.setCount(x, n-1)
	for i := 1; i < b.level; i++ {
		b.addSpan(p.prev[i], i, -1)
	}
	b.length--
	if n == 1 {
		var q path
		b.searchBefore(x, &q)
		b.unlink(x, &q)
		b.release(x)
		return
	}
	if j == 0 {
		k := l.keyAt(0)
		b.writeKey(x, &k)
	}
	if n-1 <= b.limit/2 {
		if y := b.next0(x); y != 0 && n-1+b.count(y) <= b.limit*3/4 {
			b.mergeNext(x, y, p)
		}
	}
}

// mergeNext moves the entries of tower y, x's level-0 successor, into x's
// leaf and unlinks y. p is the path to x, which is also the path before y.
func (b *Board) mergeNext(x, y uint32, p *path) {
	lx, ly := b.leafOf(x), b.leafOf(y)
	nx, ny := b.count(x), b.count(y)
	lx.move(nx, ly, 0, ny)
	id := b.leafID(x)
	for _, m := range ly.member[:ny] {
		b.loc.set(m, id)
	}
	b.setCount(x, nx+ny)
	b.unlink(y, p)
	b.release(y)
}

// replace moves the entry in slot j of tower x's leaf from old to next. An
// unchanged sort key touches nothing; a key that still sits between its
// neighbours in the leaf is written in place; otherwise the entry is
// removed and added again.
func (b *Board) replace(x uint32, j int, old, next Entry) (Change, error) {
	c := Change{Member: old.Member, Old: old, New: next}
	k := b.keyOf(next)
	l, n := b.leafOf(x), b.count(x)
	var p path
	if same := b.cmpSlot(l, j, &k) == 0; same || b.fitsSlot(x, l, n, j, &k) {
		if same {
			c.New = old
		} else {
			l.put(j, &k)
		}
		c.OldRank = b.pathTo(x, &p) + j + 1
		c.NewRank = c.OldRank
		return c, nil
	}
	c.OldRank = b.pathTo(x, &p) + j + 1
	b.removeSlot(x, j, &p)
	r, err := b.add(&k)
	if err != nil {
		return Change{}, err
	}
	c.NewRank = r
	return c, nil
}

// fitsSlot reports whether k, replacing slot j of x's leaf l of n entries,
// still orders after slot j-1 and before slot j+1 (or the next leaf). Slot
// 0 is left to the general path, since its key is also x's tower key.
func (b *Board) fitsSlot(x uint32, l *leaf, n, j int, k *key) bool {
	if j == 0 || b.cmpSlot(l, j-1, k) >= 0 {
		return false
	}
	if j < n-1 {
		return b.cmpSlot(l, j+1, k) > 0
	}
	y := b.next0(x)
	return y == 0 || b.cmp(y, k) > 0
}

// Remove deletes member's entry and reports its old rank, or false where it
// had none. O(log N).
func (b *Board) Remove(member uint32) (Change, bool) {
	x, j, ok := b.slot(member)
	if !ok {
		return Change{}, false
	}
	c := Change{Member: member, Old: b.entryOf(b.leafOf(x), j), Applied: true}
	var p path
	c.OldRank = b.pathTo(x, &p) + j + 1
	b.removeSlot(x, j, &p)
	return c, true
}

// Merge folds member from's entry into member into's under the board's
// policy, as an identity merge requires, and removes from. seq is the
// merge's sequence, the time a Sum entry reached its new total. It reports
// both changes; a member with no entry reports a zero Change.
func (b *Board) Merge(into, from uint32, seq uint64) (gone, kept Change, err error) {
	if into == from {
		return Change{}, Change{}, ErrSameMember
	}
	fx, fj, ok := b.slot(from)
	if !ok {
		return Change{}, Change{}, nil
	}
	fe := b.entryOf(b.leafOf(fx), fj)
	ix, ij, ok := b.slot(into)
	if !ok {
		gone, _ = b.Remove(from)
		fe.Member = into
		kept, err = b.insert(fe)
		return gone, kept, err
	}
	ie := b.entryOf(b.leafOf(ix), ij)
	merged, err := b.combine(ie, fe, seq)
	if err != nil {
		return Change{}, Change{}, fmt.Errorf("merge %d into %d: %w", from, into, err)
	}
	gone, _ = b.Remove(from)
	ix, ij, _ = b.slot(into) // the removal may have moved into's entry
	kept, err = b.replace(ix, ij, ie, merged)
	kept.Applied = true
	return gone, kept, err
}
