package board

import "math/bits"

// A node is a record in Board.words, addressed by the word offset of its
// first word. The record of a node of height h (1..maxLevel) is 4+h words:
//
//	[0] score key      (see key.go: order-preserving transform of the score)
//	[1] subscore key
//	[2] seq key        (seq, or ^seq for LatestFirst)
//	[3] member (low 32 bits) | height (bits 32..39)
//	[4] back (low 32) | next at level 0 (high 32)
//	[5 .. 5+h-2] level i = 1..h-1: next (low 32) | span (high 32)
//
// Offset 0 holds the header, a record of height maxLevel whose key words are
// unused. Offset 0 doubles as nil: a next link of 0 ends its level, the back
// link of the first node is 0, and the header's back link is the tail.
//
// Level 0 stores no span: it is always 1. A link to nil above level 0 keeps
// the span Redis keeps, the number of nodes after its origin, so that spans
// stay correct as nodes are appended.
const (
	maxLevel   = 32
	headerSize = 4 + maxLevel
	wScore     = 0
	wSub       = 1
	wSeq       = 2
	wMember    = 3
	wLinks     = 4
)

// recordSize returns the number of words in a record of height h.
func recordSize(h int) uint32 { return uint32(4 + h) }

func (b *Board) member(x uint32) uint32 { return uint32(b.words[x+wMember]) }
func (b *Board) height(x uint32) int    { return int(uint8(b.words[x+wMember] >> 32)) }
func (b *Board) back(x uint32) uint32   { return uint32(b.words[x+wLinks]) }
func (b *Board) next0(x uint32) uint32  { return uint32(b.words[x+wLinks] >> 32) }

func (b *Board) setBack(x, to uint32) {
	w := &b.words[x+wLinks]
	*w = *w&^0xffffffff | uint64(to)
}

func (b *Board) setNext0(x, to uint32) {
	w := &b.words[x+wLinks]
	*w = *w&0xffffffff | uint64(to)<<32
}

// link returns the next node and span of x at level i.
func (b *Board) link(x uint32, i int) (next uint32, span int) {
	if i == 0 {
		return b.next0(x), 1
	}
	w := b.words[x+wLinks+uint32(i)]
	return uint32(w), int(w >> 32)
}

func (b *Board) setLink(x uint32, i int, next uint32, span int) {
	if i == 0 {
		b.setNext0(x, next)
		return
	}
	b.words[x+wLinks+uint32(i)] = uint64(next) | uint64(span)<<32
}

// addSpan adds d to the span of x at level i > 0.
func (b *Board) addSpan(x uint32, i int, d int) {
	if i > 0 {
		b.words[x+wLinks+uint32(i)] += uint64(int64(d)) << 32
	}
}

// Records are carved from chunks, one chunk in use per height class (1, 2,
// 3, and 4 or more), so that tall nodes sit together: a search visits few
// nodes on the upper levels, over and over, and packing them densely keeps
// those levels in cache. At a million members the records of height ≥ 3
// fit in about 3.5 MB instead of one cache line each across 45 MB.
//
// A board of few entries (a tournament's board-window of ten players) would
// spend a page per height class on a handful of records, so its chunks are
// smallChunkWords until it holds smallBoard entries.
const (
	chunkWords      = 512 // one 4 KiB page
	smallChunkWords = 64  // 512 bytes: a dozen records of height 1
	smallBoard      = 256
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

// alloc returns a record of height h, reusing a freed one of that height
// where there is one. Its key and link words are for the caller to fill.
func (b *Board) alloc(h int) (uint32, error) {
	if x := b.free[h]; x != 0 {
		b.free[h] = b.next0(x)
		return x, nil
	}
	c := &b.chunks[min(h, heightClasses)-1]
	size := recordSize(h)
	if c.end-c.pos < size {
		start, words := uint64(len(b.words)), chunkSize(b.length)
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

// release puts x on the free list of its height. The caller has unlinked it.
func (b *Board) release(x uint32) {
	h := b.height(x)
	b.words[x+wMember] = uint64(h) << 32
	b.words[x+wLinks] = uint64(b.free[h]) << 32
	b.free[h] = x
}

// randomHeight draws a height with P(h ≥ k+1) = 4^-k, capped at maxLevel.
// One splitmix64 draw per node: two zero bits per extra level.
func (b *Board) randomHeight() int {
	b.rng += 0x9e3779b97f4a7c15
	z := b.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	h := 1 + bits.TrailingZeros64(z|1<<62)/2
	return min(h, maxLevel)
}
