package board

import (
	"fmt"
	"math"
)

// Board is one board-window's ranked set. Create it with New or Decode.
// Not safe for concurrent use: see the package doc.
type Board struct {
	cfg    Config
	words  []uint64             // the arena: header at 0, then node records (arena.go)
	loc    memberIndex          // member handle → node offset (index.go)
	free   [maxLevel + 1]uint32 // freed records by height, linked through next0
	chunks [heightClasses]chunk
	level  int // levels in use, 1..maxLevel; the header's links above are unused
	length int
	rng    uint64
}

// New returns an empty board with the given settings.
func New(cfg Config) (*Board, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := &Board{cfg: cfg, level: 1, rng: cfg.Seed}
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
// that building a board of known size allocates once.
func (b *Board) Grow(n int) {
	if n <= 0 {
		return
	}
	b.loc.reserve(n, b.length+n)
	// A node averages 4 + 4/3 words (p = 1/4): reserve 5.4 for the
	// randomness of heights and the chunks' slack.
	b.words = grow(b.words, n*27/5+heightClasses*int(chunkSize(b.length+n)))
}

func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	t := make([]T, len(s), len(s)+n)
	copy(t, s)
	return t
}

// nodeOf returns the node of member, or 0.
func (b *Board) nodeOf(member uint32) uint32 { return b.loc.get(member) }

func (b *Board) setLoc(member, x uint32) { b.loc.set(member, x) }

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
	x := b.nodeOf(s.Member)
	if x == 0 {
		return b.insert(e)
	}
	old := b.entryAt(x)
	next, applied, err := b.apply(old, e)
	if err != nil {
		return Change{}, fmt.Errorf("member %d: %w", s.Member, err)
	}
	c, err := b.replace(x, old, next)
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
	h := b.randomHeight()
	x, err := b.alloc(h)
	if err != nil {
		return Change{}, err
	}
	k := b.keyOf(e)
	b.words[x+wMember] = uint64(h) << 32
	b.writeKey(x, &k)
	var p path
	b.search(&k, &p)
	r := b.linkNode(x, h, &p)
	b.setLoc(e.Member, x)
	return Change{Member: e.Member, NewRank: r, New: e, Applied: true}, nil
}

// replace moves node x from entry old to entry next. An unchanged sort key
// touches nothing; a key that still sits between x's neighbours is written
// in place; otherwise x is unlinked and relinked at the same height.
func (b *Board) replace(x uint32, old, next Entry) (Change, error) {
	c := Change{Member: old.Member, Old: old, New: next}
	k := b.keyOf(next)
	if b.cmp(x, &k) == 0 {
		c.New = old
		c.OldRank = b.rankOf(x)
		c.NewRank = c.OldRank
		return c, nil
	}
	var from, to path
	xk := b.nodeKey(x)
	b.search2(&xk, &k, &from, &to)
	c.OldRank = from.rank[0] + 1
	if to.prev[0] == x || to.prev[0] == from.prev[0] {
		// The new key sits where x sits: no link changes.
		b.writeKey(x, &k)
		c.NewRank = c.OldRank
		return c, nil
	}
	b.unlinkNode(x, &from)
	b.writeKey(x, &k)
	to.without(x, &from, c.OldRank, b.level)
	c.NewRank = b.linkNode(x, b.height(x), &to)
	return c, nil
}

// without adjusts p, a path found while node x (at rank r, with path xp)
// was linked, to the list after x was unlinked: where x was a predecessor,
// x's own predecessor takes its place; predecessors after x move up a rank.
// Levels at or above level were emptied by the unlink and start at the header.
func (p *path) without(x uint32, xp *path, r, level int) {
	for i := range maxLevel {
		switch {
		case i >= level:
			p.prev[i], p.rank[i] = 0, 0
		case p.prev[i] == x:
			p.prev[i], p.rank[i] = xp.prev[i], xp.rank[i]
		case p.rank[i] > r:
			p.rank[i]--
		}
	}
}

// searchNode fills p with the predecessors of node x.
func (b *Board) searchNode(x uint32, p *path) {
	k := b.nodeKey(x)
	b.search(&k, p)
}

// Remove deletes member's entry and reports its old rank, or false where it
// had none. O(log N).
func (b *Board) Remove(member uint32) (Change, bool) {
	x := b.nodeOf(member)
	if x == 0 {
		return Change{}, false
	}
	c := Change{Member: member, Old: b.entryAt(x), Applied: true}
	var p path
	b.searchNode(x, &p)
	c.OldRank = p.rank[0] + 1
	b.unlinkNode(x, &p)
	b.loc.del(member)
	b.release(x)
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
	fx := b.nodeOf(from)
	if fx == 0 {
		return Change{}, Change{}, nil
	}
	fe := b.entryAt(fx)
	ix := b.nodeOf(into)
	if ix == 0 {
		gone, _ = b.Remove(from)
		fe.Member = into
		kept, err = b.insert(fe)
		return gone, kept, err
	}
	ie := b.entryAt(ix)
	merged, err := b.combine(ie, fe, seq)
	if err != nil {
		return Change{}, Change{}, fmt.Errorf("merge %d into %d: %w", from, into, err)
	}
	gone, _ = b.Remove(from)
	kept, err = b.replace(b.nodeOf(into), ie, merged)
	kept.Applied = true
	return gone, kept, err
}
