package board

import "math/bits"

// A tower is a record in Board.words, one per leaf, addressed by the word
// offset of its first word. The towers form the skip list: level 0 links
// every leaf in order, and a tower of height h (1..maxLevel) is also linked
// on levels 1..h-1. Its record is 5+h words:
//
//	[0] score key      the key of its leaf's first entry (key.go)
//	[1] subscore key
//	[2] seq key        (seq, or ^seq for LatestFirst)
//	[3] member (low 32) | height (bits 32..39) | entries (bits 40..47)
//	[4] back (low 32) | next at level 0 (high 32)
//	[5] leaf id
//	[6 .. 6+h-2] level i = 1..h-1: next (low 32) | span (high 32)
//
// Spans count entries, not towers: the span of a link is the number of
// entries in the leaves from its origin up to (not including) its target,
// so an entry's rank is the sum of spans along the search path to its leaf,
// plus its slot. Level 0 keeps no span: it is the origin's entry count. A
// link to nil keeps the entries from its origin to the end, as Redis keeps
// its node counts, so that spans stay right as leaves are appended.
//
// Offset 0 holds the header, a record of height maxLevel with no leaf and
// no entries. Offset 0 doubles as nil: a next link of 0 ends its level, the
// back link of the first tower is 0, and the header's back link is the tail.
const (
	maxLevel   = 32
	headerSize = 5 + maxLevel
	wScore     = 0
	wSub       = 1
	wSeq       = 2
	wMember    = 3
	wLinks     = 4
	wLeaf      = 5
	wLevels    = 6
)

// recordSize returns the number of words in a record of height h.
func recordSize(h int) uint32 { return uint32(5 + h) }

func (b *Board) height(x uint32) int   { return int(uint8(b.words[x+wMember] >> 32)) }
func (b *Board) count(x uint32) int    { return int(uint8(b.words[x+wMember] >> 40)) }
func (b *Board) back(x uint32) uint32  { return uint32(b.words[x+wLinks]) }
func (b *Board) next0(x uint32) uint32 { return uint32(b.words[x+wLinks] >> 32) }
func (b *Board) leafID(x uint32) uint32 {
	return uint32(b.words[x+wLeaf])
}

// leafOf returns tower x's leaf.
func (b *Board) leafOf(x uint32) *leaf { return b.leafAt(b.leafID(x)) }

func (b *Board) setCount(x uint32, n int) {
	w := &b.words[x+wMember]
	*w = *w&^(0xff<<40) | uint64(n)<<40
}

func (b *Board) setBack(x, to uint32) {
	w := &b.words[x+wLinks]
	*w = *w&^0xffffffff | uint64(to)
}

func (b *Board) setNext0(x, to uint32) {
	w := &b.words[x+wLinks]
	*w = *w&0xffffffff | uint64(to)<<32
}

// link returns the next tower and span of x at level i.
func (b *Board) link(x uint32, i int) (next uint32, span int) {
	if i == 0 {
		return b.next0(x), b.count(x)
	}
	w := b.words[x+wLevels+uint32(i)-1]
	return uint32(w), int(w >> 32)
}

// setLink sets x's link at level i > 0.
func (b *Board) setLink(x uint32, i int, next uint32, span int) {
	b.words[x+wLevels+uint32(i)-1] = uint64(next) | uint64(span)<<32
}

// addSpan adds d to the span of x at level i > 0.
func (b *Board) addSpan(x uint32, i int, d int) {
	b.words[x+wLevels+uint32(i)-1] += uint64(int64(d)) << 32
}

// Records are carved from chunks, one chunk in use per height class (1, 2,
// 3, and 4 or more), so that tall towers sit together: a search visits few
// towers on the upper levels, over and over, and packing them densely keeps
// those levels in cache. A leaf of ~90 entries under each tower means a
// million members need ~11,000 towers, ~0.6 MB in all: the whole index
// above the leaves fits in a 1 MB L2 cache.
//
// A board of few entries (a tournament's board-window of ten players) would
// spend a page per height class on one record, so its chunks are
// smallChunkWords until it holds smallBoard entries.
const (
	chunkWords      = 512 // one 4 KiB page
	smallChunkWords = 16
	smallBoard      = 1024
	heightClasses   = 4
)

// chunkSize returns the words of the next chunk of a board of n entries.
func chunkSize(n int) uint64 {
	if n < smallBoard {
		return smallChunkWords
	}
	return chunkWords
}

// chunk is the unused part of the chunk a height class allocates from.
type chunk struct{ pos, end uint32 }

// allocTower returns a tower of height h with an empty leaf: count 0, no
// links, the leaf's tower set. Its key is for the caller to write.
func (b *Board) allocTower(h int) (uint32, error) {
	id, err := b.allocLeaf()
	if err != nil {
		return 0, err
	}
	x := b.free[h]
	if x != 0 {
		b.free[h] = b.next0(x)
	} else if x, err = b.carve(h); err != nil {
		b.freeLeaf(id)
		return 0, err
	}
	b.words[x+wMember] = uint64(h) << 32
	b.words[x+wLinks] = 0
	b.words[x+wLeaf] = uint64(id)
	b.leafAt(id).tower = x
	return x, nil
}

// carve cuts a new record of height h from its height class's chunk.
func (b *Board) carve(h int) (uint32, error) {
	c := &b.chunks[min(h, heightClasses)-1]
	size := recordSize(h)
	if c.end-c.pos < size {
		start, words := uint64(len(b.words)), max(chunkSize(b.length), uint64(size))
		if start+words > 1<<32-1 {
			return 0, ErrTooLarge
		}
		b.words = append(b.words, make([]uint64, words)...)
		c.pos, c.end = uint32(start), uint32(start+words)
	}
	x := c.pos
	c.pos += size
	return x, nil
}

// release puts tower x on the free list of its height and frees its leaf.
// The caller has unlinked it.
func (b *Board) release(x uint32) {
	h := b.height(x)
	b.freeLeaf(b.leafID(x))
	b.words[x+wMember] = uint64(h) << 32
	b.words[x+wLinks] = uint64(b.free[h]) << 32
	b.free[h] = x
}

// randomHeight draws a height with P(h ≥ k+1) = 4^-k, capped at maxLevel.
// One splitmix64 draw per tower: two zero bits per extra level.
func (b *Board) randomHeight() int {
	b.rng += 0x9e3779b97f4a7c15
	z := b.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	h := 1 + bits.TrailingZeros64(z|1<<62)/2
	return min(h, maxLevel)
}
