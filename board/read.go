package board

import (
	"math"
	"slices"
)

// Get returns member's entry with its rank, or false. O(log N).
func (b *Board) Get(member uint32) (Row, bool) {
	x, j, ok := b.slot(member)
	if !ok {
		return Row{}, false
	}
	var p path
	return Row{Rank: b.pathTo(x, &p) + j + 1, Entry: b.entryOf(b.leafOf(x), j)}, true
}

// Rank returns member's 1-based rank, or false. O(log N).
func (b *Board) Rank(member uint32) (int, bool) {
	x, j, ok := b.slot(member)
	if !ok {
		return 0, false
	}
	var p path
	return b.pathTo(x, &p) + j + 1, true
}

// At returns the row at 1-based rank r, or false past either end. O(log N).
func (b *Board) At(r int) (Row, bool) {
	if r < 1 || r > b.length {
		return Row{}, false
	}
	x, j := b.find(r)
	return Row{Rank: r, Entry: b.entryOf(b.leafOf(x), j)}, true
}

// Range appends to dst up to limit rows from rank offset+1 on and returns
// the extended slice. O(log N + limit); it allocates only where dst lacks
// the capacity.
func (b *Board) Range(offset, limit int, dst []Row) []Row {
	if offset < 0 || limit <= 0 || offset >= b.length {
		return dst
	}
	x, j := b.find(offset + 1)
	return b.appendRows(dst, x, j, offset+1, limit)
}

// appendRows appends up to n rows starting with slot j of tower x, at rank
// r. It decodes the leaf's columns in a plain loop: the top rows of a
// board are the most read thing in the gateway.
func (b *Board) appendRows(dst []Row, x uint32, j, r, n int) []Row {
	dst = slices.Grow(dst, max(0, min(n, b.length-r+1)))
	o, so := b.cfg.Order, b.cfg.SubscoreOrder
	var flip uint64 // LatestFirst stores ^seq
	if b.cfg.Tiebreak == LatestFirst {
		flip = ^uint64(0)
	}
	for ; x != 0 && n > 0; x, j = b.next0(x), 0 {
		l := b.leafOf(x)
		end := min(b.count(x), j+n)
		n -= end - j
		sc := l.score[j:end]
		sb, sq, mb := l.sub[j:end][:len(sc)], l.seq[j:end][:len(sc)], l.member[j:end][:len(sc)]
		at := len(dst)
		dst = dst[:at+len(sc)]
		out := dst[at:][:len(sc)]
		for i, k := range sc {
			// Field by field: a composite literal is built on the stack
			// and copied, which doubles the cost of a row.
			row := &out[i]
			row.Rank = r + i
			row.Member = mb[i]
			row.Score = keyFloat(k, o)
			row.Subscore = keyFloat(sb[i], so)
			row.Seq = sq[i] ^ flip
		}
		r += end - j
	}
	return dst
}

// ascend calls fn with each row from slot j of tower x (rank r) on, until
// fn returns false or the board ends.
func (b *Board) ascend(x uint32, j, r int, fn func(Row) bool) {
	for ; x != 0; x, j = b.next0(x), 0 {
		l, n := b.leafOf(x), b.count(x)
		for ; j < n; j, r = j+1, r+1 {
			if !fn(Row{Rank: r, Entry: b.entryOf(l, j)}) {
				return
			}
		}
	}
}

// Around appends to dst the rows from radius ranks above member to radius
// ranks below it, member's own included, clipped at both ends, or reports
// false where member has no entry. O(log N + radius).
func (b *Board) Around(member uint32, radius int, dst []Row) ([]Row, bool) {
	x, j, ok := b.slot(member)
	if !ok {
		return dst, false
	}
	radius = max(radius, 0)
	var p path
	r := b.pathTo(x, &p) + j + 1
	// Start at member's slot and step back up to radius rows, leaf by leaf.
	sx, sj, up := x, j, min(j, radius)
	sj -= up
	for y := b.back(x); up < radius && y != 0; y = b.back(y) {
		n := b.count(y)
		take := min(n, radius-up)
		sx, sj, up = y, n-take, up+take
	}
	return b.appendRows(dst, sx, sj, r-up, up+radius+1), true
}

// Ascend calls fn with each row from rank from on, in rank order, until fn
// returns false. O(log N) to start, O(1) per row. fn must not mutate b.
func (b *Board) Ascend(from int, fn func(Row) bool) {
	from = max(from, 1)
	if from > b.length {
		return
	}
	x, j := b.find(from)
	b.ascend(x, j, from, fn)
}

// CountBetter returns how many entries have a strictly better (score,
// subscore) pair than the one given (for the rank a new entry would take,
// which depends on the tiebreak, see CountBefore). Infinities count as the
// extremes; NaN gives an unspecified count. O(log N).
func (b *Board) CountBetter(score, subscore float64) int {
	k := key{
		score: floatKey(score, b.cfg.Order),
		sub:   floatKey(subscore, b.cfg.SubscoreOrder),
	}
	return b.countBefore(&k, true)
}

// CountBefore returns how many entries order strictly before e's position
// (score, subscore, sequence, member) on this board, whether or not e is on
// it: the entries a cursor that stopped at e has already passed. O(log N).
func (b *Board) CountBefore(e Entry) int {
	k := b.keyOf(e)
	return b.countBefore(&k, false)
}

// ScoreSpan locates the entries whose score lies in [lo, hi] (lo ≤ hi;
// infinities count as the extremes): they hold ranks from+1 to to, in rank
// order, so to−from of them. The subscore plays no part. O(log N).
func (b *Board) ScoreSpan(lo, hi float64) (from, to int) {
	better, worse := hi, lo
	if b.cfg.Order == Asc {
		better, worse = lo, hi
	}
	// The smallest key of the better end's score, and the largest of the
	// worse end's: no finite subscore maps to either extreme of sub.
	first := key{score: floatKey(better, b.cfg.Order)}
	last := key{score: floatKey(worse, b.cfg.Order), sub: math.MaxUint64}
	from = b.countBefore(&first, true)
	to = b.countBefore(&last, true)
	return from, max(to, from)
}
