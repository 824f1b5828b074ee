package board

// Entries live in leaves: sorted blocks of up to leafCap entries, stored
// column by column (all score keys, then all subscore keys, …) so that a
// binary search over a leaf reads one 1 KiB column and the whole leaf
// holds no pointers. The index of towers (tower.go) sits above the leaves;
// a member's entry is found through the member index, which names its leaf.
//
// A leaf holds 1..limit entries (limit is leafCap but for tests), in the
// board's order, and its first entry's key is copied into its tower, which
// is what searches compare with: a search reads one leaf, at the end.
const leafCap = 128

// leaf is one block of entries. Slots [0, n) are in use, n being the count
// kept in the leaf's tower. The columns hold keys (key.go), not floats.
type leaf struct {
	score, sub, seq [leafCap]uint64
	member          [leafCap]uint32
	tower           uint32 // the offset of this leaf's tower
}

// Leaves are allocated in pages: one leaf for id 1, seven for ids 2..8,
// then 63 a page, so that a board of ten entries holds one leaf (3,592
// bytes) and a large board's pages fill their spans: 63 leaves are 226,296
// bytes of a 229,376-byte span (98.7 %), where 64 would waste 12 %.
// Leaf id 0 is never used: the member index maps an absent member to 0.
const (
	bigPageLeaves = 63
	firstBigLeaf  = 9
)

// pageOf returns the page of leaf id and the leaf's index in it.
func pageOf(id uint32) (page, i int) {
	switch {
	case id >= firstBigLeaf:
		n := id - firstBigLeaf
		return 2 + int(n/bigPageLeaves), int(n % bigPageLeaves)
	case id >= 2:
		return 1, int(id - 2)
	}
	return 0, 0
}

// leafAt returns the leaf with id id.
func (b *Board) leafAt(id uint32) *leaf {
	p, i := pageOf(id)
	return &b.leaves[p][i]
}

// allocLeaf returns an unused leaf id, reusing a freed one first.
func (b *Board) allocLeaf() (uint32, error) {
	if n := len(b.freeLeaves); n > 0 {
		id := b.freeLeaves[n-1]
		b.freeLeaves = b.freeLeaves[:n-1]
		return id, nil
	}
	id := max(b.nextLeaf, 1)
	if id == 1<<32-1 {
		return 0, ErrTooLarge
	}
	if p, _ := pageOf(id); p == len(b.leaves) {
		size := bigPageLeaves
		switch p {
		case 0:
			size = 1
		case 1:
			size = firstBigLeaf - 2
		}
		b.leaves = append(b.leaves, make([]leaf, size))
	}
	b.nextLeaf = id + 1
	return id, nil
}

// freeLeaf returns leaf id to the free list. Its slots keep stale keys,
// which no reader sees: a leaf is read only through a linked tower.
func (b *Board) freeLeaf(id uint32) { b.freeLeaves = append(b.freeLeaves, id) }

// keyAt returns the key of slot j.
func (l *leaf) keyAt(j int) key {
	return key{score: l.score[j], sub: l.sub[j], seq: l.seq[j], member: l.member[j]}
}

// put writes k into slot j.
func (l *leaf) put(j int, k *key) {
	l.score[j], l.sub[j], l.seq[j], l.member[j] = k.score, k.sub, k.seq, k.member
}

// move copies slots [from, from+n) of src to [to, to+n) of l; the ranges
// may overlap when src is l.
func (l *leaf) move(to int, src *leaf, from, n int) {
	copy(l.score[to:to+n], src.score[from:from+n])
	copy(l.sub[to:to+n], src.sub[from:from+n])
	copy(l.seq[to:to+n], src.seq[from:from+n])
	copy(l.member[to:to+n], src.member[from:from+n])
}

// slotOf returns the slot of member m among the first n, or -1.
func (l *leaf) slotOf(m uint32, n int) int {
	for j, x := range l.member[:n] {
		if x == m {
			return j
		}
	}
	return -1
}

// cmpSlot compares slot j with k: negative where slot j orders first.
func (b *Board) cmpSlot(l *leaf, j int, k *key) int {
	switch {
	case l.score[j] != k.score:
		return cmpU64(l.score[j], k.score)
	case l.sub[j] != k.sub:
		return cmpU64(l.sub[j], k.sub)
	case l.seq[j] != k.seq:
		return cmpU64(l.seq[j], k.seq)
	}
	return b.cmpMembers(l.member[j], k.member)
}

// slotPrecedes reports whether slot j orders strictly before k, comparing
// only score and subscore where scoreOnly is set.
func (b *Board) slotPrecedes(l *leaf, j int, k *key, scoreOnly bool) bool {
	if l.score[j] != k.score {
		return l.score[j] < k.score
	}
	if scoreOnly || l.sub[j] != k.sub {
		return l.sub[j] < k.sub
	}
	if l.seq[j] != k.seq {
		return l.seq[j] < k.seq
	}
	return b.cmpMembers(l.member[j], k.member) < 0
}

// countPreceding returns how many of the first n slots order strictly
// before k: the slots are sorted, so it is a binary search.
func (b *Board) countPreceding(l *leaf, n int, k *key, scoreOnly bool) int {
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b.slotPrecedes(l, mid, k, scoreOnly) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// entryOf decodes slot j of l.
func (b *Board) entryOf(l *leaf, j int) Entry {
	seq := l.seq[j]
	if b.cfg.Tiebreak == LatestFirst {
		seq = ^seq
	}
	return Entry{
		Member:   l.member[j],
		Score:    keyFloat(l.score[j], b.cfg.Order),
		Subscore: keyFloat(l.sub[j], b.cfg.SubscoreOrder),
		Seq:      seq,
	}
}
