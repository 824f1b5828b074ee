package board

import (
	"fmt"
	"math"
)

// apply returns the entry that the board's policy makes of old and a
// submission s for the same member, and whether the policy took s. A result
// with old's score and subscore is old itself: an entry keeps the sequence
// at which it first reached its score.
func (b *Board) apply(old, s Entry) (Entry, bool, error) {
	var next Entry
	switch b.cfg.Policy {
	case Best:
		if !b.betterScore(s, old) {
			return old, false, nil
		}
		next = s
	case Latest:
		next = s
	case Sum:
		var err error
		if next, err = sum(old, s, s.Seq); err != nil {
			return old, false, err
		}
	case First:
		return old, false, nil
	}
	if sameScore(next, old) {
		return old, true, nil
	}
	return next, true, nil
}

// combine returns the entry that the board's policy makes of two members'
// entries being merged: the better, the later, the earlier, or their sum
// reached at seq. The result carries a's member.
func (b *Board) combine(a, o Entry, seq uint64) (Entry, error) {
	o.Member = a.Member
	switch b.cfg.Policy {
	case Best:
		if b.betterScore(o, a) || (sameScore(o, a) && b.seqKey(o.Seq) < b.seqKey(a.Seq)) {
			return o, nil
		}
	case Latest:
		if o.Seq > a.Seq {
			return o, nil
		}
	case First:
		if o.Seq < a.Seq {
			return o, nil
		}
	case Sum:
		s, err := sum(a, o, seq)
		if err != nil || sameScore(s, a) {
			return a, err
		}
		return s, nil
	}
	return a, nil
}

// betterScore reports whether x's (score, subscore) pair ranks strictly
// before y's by the board's orders.
func (b *Board) betterScore(x, y Entry) bool {
	xs, ys := floatKey(x.Score, b.cfg.Order), floatKey(y.Score, b.cfg.Order)
	if xs != ys {
		return xs < ys
	}
	return floatKey(x.Subscore, b.cfg.SubscoreOrder) < floatKey(y.Subscore, b.cfg.SubscoreOrder)
}

func sameScore(x, y Entry) bool {
	return x.Score == y.Score && x.Subscore == y.Subscore
}

// sum adds y's score and subscore to x's, reached at seq. A total that
// overflows to infinity is refused, so entries stay finite.
func sum(x, y Entry, seq uint64) (Entry, error) {
	s := Entry{Member: x.Member, Score: x.Score + y.Score, Subscore: x.Subscore + y.Subscore, Seq: seq}
	if math.IsInf(s.Score, 0) {
		return x, fmt.Errorf("%w: sum of scores overflows", ErrBadScore)
	}
	if math.IsInf(s.Subscore, 0) {
		return x, fmt.Errorf("%w: sum of subscores overflows", ErrBadSubscore)
	}
	return s, nil
}
