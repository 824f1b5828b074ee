package board

// path is a search path: at every level i below the board's level, a tower
// (prev[i], 0 for the header) and the number of entries before its leaf
// (rank[i], 0 for the header). It lives on the caller's stack, so read
// paths never write shared scratch space.
//
// Two kinds are used. A path to tower x holds, at each level, the last
// tower at or before x on that level: x itself below x's height. Every
// link out of it passes over x or starts at x, so adding an entry to x's
// leaf adds one to the span of each. A path before x holds the last tower
// strictly before x: what unlinking x needs.
type path struct {
	prev [maxLevel]uint32
	rank [maxLevel]int
}

// locate fills p with the path to the leaf where k belongs: the last tower
// whose first key orders at or before k or, where k orders before every
// leaf, the first leaf. It returns that tower, or 0 on an empty board.
func (b *Board) locate(k *key, p *path) uint32 {
	x, r := uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			next, span := b.link(x, i)
			if next == 0 || b.cmp(next, k) > 0 {
				break
			}
			x, r = next, r+span
		}
		p.prev[i], p.rank[i] = x, r
	}
	if x != 0 {
		return x
	}
	first := b.next0(0)
	if first == 0 {
		return 0
	}
	for i := range b.height(first) {
		p.prev[i] = first // rank stays 0: no entry precedes the first leaf
	}
	return first
}

// pathTo fills p with the path to tower x and returns the entries before
// its leaf. O(log N), on towers only.
func (b *Board) pathTo(x uint32, p *path) int {
	k := b.towerKey(x)
	b.locate(&k, p)
	return p.rank[0]
}

// searchBefore fills p with the path before tower x.
func (b *Board) searchBefore(x uint32, p *path) {
	k := b.towerKey(x)
	y, r := uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			next, span := b.link(y, i)
			if next == 0 || b.cmp(next, &k) >= 0 {
				break
			}
			y, r = next, r+span
		}
		p.prev[i], p.rank[i] = y, r
	}
}

// countBefore returns how many entries order strictly before k, comparing
// only score and subscore where scoreOnly is set. O(log N): down the towers
// to the last leaf that starts before k, then a binary search in it.
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
	if x == 0 {
		return 0
	}
	return r + b.countPreceding(b.leafOf(x), b.count(x), k, scoreOnly)
}

// find returns the tower whose leaf holds 1-based rank r, 1 ≤ r ≤ Len, and
// r's slot in it. O(log N): it descends while the spans stay short of r.
func (b *Board) find(r int) (x uint32, slot int) {
	before := 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			next, span := b.link(x, i)
			if next == 0 || before+span >= r {
				break
			}
			x, before = next, before+span
		}
	}
	// The header holds no entries, so the level-0 step above always leaves it.
	return x, r - before - 1
}

// raise brings the board's level up to h, filling p's new levels with the
// header, whose new links span every entry (they lead to nil).
func (b *Board) raise(h int, p *path) {
	for i := b.level; i < h; i++ {
		p.prev[i], p.rank[i] = 0, 0
		b.setLink(0, i, 0, b.length)
	}
	b.level = max(b.level, h)
}

// linkAfter links tower y, of height h, whose leaf holds entries already
// counted in b.length, right after the tower p leads to, and before that
// tower's level-0 successor. before is the number of entries before y's
// leaf. On levels below h the old link's span is shared between the
// predecessor and y; above, a link that passed over y's entries passes
// over them still.
func (b *Board) linkAfter(y uint32, h int, p *path, before int) {
	b.raise(h, p)
	x := p.prev[0]
	after := b.next0(x)
	b.setNext0(y, after)
	b.setNext0(x, y)
	b.setBack(y, x)
	b.setBack(after, y) // after == 0 makes y the header's tail
	for i := 1; i < h; i++ {
		u := p.prev[i]
		next, span := b.link(u, i)
		head := before - p.rank[i]
		b.setLink(y, i, next, span-head)
		b.setLink(u, i, y, head)
	}
}

// unlink removes tower x, whose path before is p, from every level. Its
// entries have left the board or moved into the tower before it, so every
// span that passed over them keeps its count. The record stays allocated:
// the caller releases it.
func (b *Board) unlink(x uint32, p *path) {
	for i := 1; i < b.height(x); i++ {
		u := p.prev[i]
		_, span := b.link(u, i)
		xnext, xspan := b.link(x, i)
		b.setLink(u, i, xnext, span+xspan)
	}
	prev, after := b.back(x), b.next0(x)
	b.setNext0(prev, after)
	b.setBack(after, prev)
	for b.level > 1 {
		if next, _ := b.link(0, b.level-1); next != 0 {
			break
		}
		b.level--
	}
}
