package board

import "math"

const signBit = 1 << 63

// key is an entry's position in the order. Smaller keys rank first: the
// score and subscore are stored as order-preserving unsigned transforms with
// the board's order folded in, so comparing two entries is comparing three
// integers and, on a full tie, two members.
type key struct {
	score, sub, seq uint64
	member          uint32
}

// floatKey maps a finite float to a uint64 whose unsigned order is the
// float's order, reversed for Desc. -0 maps as +0: equal scores tie.
func floatKey(f float64, o Order) uint64 {
	if f == 0 {
		f = 0 // -0 == 0, so this turns -0 into +0
	}
	k := math.Float64bits(f)
	if k&signBit != 0 {
		k = ^k
	} else {
		k |= signBit
	}
	if o == Desc {
		k = ^k
	}
	return k
}

// keyFloat inverts floatKey, without branches: it runs once per row read.
func keyFloat(k uint64, o Order) float64 {
	k ^= -uint64(o ^ Asc) // Desc (0) flips every bit, Asc (1) none
	neg := uint64(int64(k) >> 63)
	// A set top bit marks a non-negative float: clear the bit. Otherwise
	// the float was negative and every bit was flipped: flip them back.
	return math.Float64frombits(k ^ (^neg | signBit))
}

func (b *Board) seqKey(seq uint64) uint64 {
	if b.cfg.Tiebreak == LatestFirst {
		return ^seq
	}
	return seq
}

// keyOf returns the key an entry would have on this board.
func (b *Board) keyOf(e Entry) key {
	return key{
		score:  floatKey(e.Score, b.cfg.Order),
		sub:    floatKey(e.Subscore, b.cfg.SubscoreOrder),
		seq:    b.seqKey(e.Seq),
		member: e.Member,
	}
}

// towerKey returns tower x's key: its leaf's first entry's.
func (b *Board) towerKey(x uint32) key {
	w := b.words[x : x+wLinks : x+wLinks]
	return key{score: w[wScore], sub: w[wSub], seq: w[wSeq], member: uint32(w[wMember])}
}

// cmpKeys compares two keys in the board's order.
func (b *Board) cmpKeys(x, k *key) int {
	switch {
	case x.score != k.score:
		return cmpU64(x.score, k.score)
	case x.sub != k.sub:
		return cmpU64(x.sub, k.sub)
	case x.seq != k.seq:
		return cmpU64(x.seq, k.seq)
	}
	return b.cmpMembers(x.member, k.member)
}

// writeKey stores k as tower x's key, keeping x's height and count.
func (b *Board) writeKey(x uint32, k *key) {
	w := b.words[x : x+wLinks : x+wLinks]
	w[wScore], w[wSub], w[wSeq] = k.score, k.sub, k.seq
	w[wMember] = w[wMember]&^0xffffffff | uint64(k.member)
}

// cmp compares tower x's key with k: negative where x orders first.
func (b *Board) cmp(x uint32, k *key) int {
	w := b.words[x : x+wLinks : x+wLinks]
	switch {
	case w[wScore] != k.score:
		return cmpU64(w[wScore], k.score)
	case w[wSub] != k.sub:
		return cmpU64(w[wSub], k.sub)
	case w[wSeq] != k.seq:
		return cmpU64(w[wSeq], k.seq)
	}
	return b.cmpMembers(uint32(w[wMember]), k.member)
}

// before reports whether tower x's key orders strictly before k.
func (b *Board) before(x uint32, k *key) bool {
	w := b.words[x : x+wLinks : x+wLinks]
	if w[wScore] != k.score {
		return w[wScore] < k.score
	}
	if w[wSub] != k.sub {
		return w[wSub] < k.sub
	}
	if w[wSeq] != k.seq {
		return w[wSeq] < k.seq
	}
	return b.cmpMembers(uint32(w[wMember]), k.member) < 0
}

// scoreBefore reports whether tower x's (score, subscore) orders strictly
// before k's, ignoring sequence and member.
func (b *Board) scoreBefore(x uint32, k *key) bool {
	w := b.words[x : x+wSub+1 : x+wSub+1]
	if w[wScore] != k.score {
		return w[wScore] < k.score
	}
	return w[wSub] < k.sub
}

func (b *Board) cmpMembers(m1, m2 uint32) int {
	if m1 == m2 {
		return 0
	}
	if b.cfg.CompareMembers != nil {
		if c := b.cfg.CompareMembers(m1, m2); c != 0 {
			return c
		}
	}
	return cmpU64(uint64(m1), uint64(m2))
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (b *Board) precedes(x uint32, k *key, scoreOnly bool) bool {
	if scoreOnly {
		return b.scoreBefore(x, k)
	}
	return b.before(x, k)
}
