package board

// path is a search path: at every level i below the board's level, the last
// node ordering before the key (prev[i], 0 for the header) and that node's
// rank (rank[i], 0 for the header). It lives on the caller's stack, so read
// paths never write shared scratch space.
type path struct {
	prev [maxLevel]uint32
	rank [maxLevel]int
}

// search fills p with the predecessors of k. O(log N) expected.
func (b *Board) search(k *key, p *path) {
	x, r := uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			next, span := b.link(x, i)
			if next == 0 || !b.before(next, k) {
				break
			}
			x, r = next, r+span
		}
		p.prev[i], p.rank[i] = x, r
	}
}

// search2 fills pa and pb with the predecessors of ka and kb in one
// descent. The two paths are independent chains of loads, so stepping them
// in lockstep lets the processor wait for both cache misses at once: an
// update costs little more than one search instead of two.
func (b *Board) search2(ka, kb *key, pa, pb *path) {
	xa, ra, xb, rb := uint32(0), 0, uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			na, sa := b.link(xa, i)
			nb, sb := b.link(xb, i)
			stepA := na != 0 && b.before(na, ka)
			stepB := nb != 0 && b.before(nb, kb)
			if stepA {
				xa, ra = na, ra+sa
			}
			if stepB {
				xb, rb = nb, rb+sb
			}
			if !stepA && !stepB {
				break
			}
		}
		pa.prev[i], pa.rank[i] = xa, ra
		pb.prev[i], pb.rank[i] = xb, rb
	}
}

// rankOf returns the rank of node x, searching by its own key. O(log N).
func (b *Board) rankOf(x uint32) int {
	k := b.nodeKey(x)
	return b.countBefore(&k, false) + 1
}

// countBefore returns how many nodes order strictly before k, comparing
// only score and subscore where scoreOnly is set. O(log N).
func (b *Board) countBefore(k *key, scoreOnly bool) int {
	x, r := uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			next, span := b.link(x, i)
			if next == 0 || !b.precedes(next, k, scoreOnly) {
				break
			}
			x, r = next, r+span
		}
	}
	return r
}

// nodeAt returns the node at 1-based rank r, 1 ≤ r ≤ Len. O(log N): it
// descends while the spans do not overshoot.
func (b *Board) nodeAt(r int) uint32 {
	x, traversed := uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			next, span := b.link(x, i)
			if next == 0 || traversed+span > r {
				break
			}
			x, traversed = next, traversed+span
		}
		if traversed == r {
			return x
		}
	}
	return 0
}

// linkNode inserts node x, whose key is written and whose height is h, after
// the predecessors in p, and returns its rank. Spans are Redis's arithmetic:
// x sits rank[0]+1; the link from prev[i] now spans to x, and x's link
// inherits the rest of prev[i]'s old span.
func (b *Board) linkNode(x uint32, h int, p *path) int {
	if h > b.level {
		for i := b.level; i < h; i++ {
			p.prev[i], p.rank[i] = 0, 0
			b.setLink(0, i, 0, b.length)
		}
		b.level = h
	}
	for i := 0; i < h; i++ {
		u := p.prev[i]
		next, span := b.link(u, i)
		b.setLink(x, i, next, span-(p.rank[0]-p.rank[i]))
		b.setLink(u, i, x, p.rank[0]-p.rank[i]+1)
	}
	for i := h; i < b.level; i++ {
		b.addSpan(p.prev[i], i, 1)
	}
	after := b.next0(x)
	b.setBack(x, p.prev[0])
	b.setBack(after, x) // after == 0 makes x the header's tail
	b.length++
	return p.rank[0] + 1
}

// unlinkNode removes node x, whose predecessors are in p, from every level.
// The record stays allocated: the caller reuses or releases it.
func (b *Board) unlinkNode(x uint32, p *path) {
	for i := 0; i < b.level; i++ {
		u := p.prev[i]
		next, span := b.link(u, i)
		if next == x {
			xnext, xspan := b.link(x, i)
			b.setLink(u, i, xnext, span+xspan-1)
		} else {
			b.addSpan(u, i, -1)
		}
	}
	b.setBack(b.next0(x), b.back(x))
	for b.level > 1 {
		if next, _ := b.link(0, b.level-1); next != 0 {
			break
		}
		b.level--
	}
	b.length--
}
