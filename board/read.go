package board

// Get returns member's entry with its rank, or false. O(log N).
func (b *Board) Get(member uint32) (Row, bool) {
	x := b.nodeOf(member)
	if x == 0 {
		return Row{}, false
	}
	return Row{Rank: b.rankOf(x), Entry: b.entryAt(x)}, true
}

// Rank returns member's 1-based rank, or false. O(log N).
func (b *Board) Rank(member uint32) (int, bool) {
	x := b.nodeOf(member)
	if x == 0 {
		return 0, false
	}
	return b.rankOf(x), true
}

// At returns the row at 1-based rank r, or false past either end. O(log N).
func (b *Board) At(r int) (Row, bool) {
	if r < 1 || r > b.length {
		return Row{}, false
	}
	return Row{Rank: r, Entry: b.entryAt(b.nodeAt(r))}, true
}

// Range appends to dst up to limit rows from rank offset+1 on and returns
// the extended slice. O(log N + limit); it allocates only where dst lacks
// the capacity.
func (b *Board) Range(offset, limit int, dst []Row) []Row {
	if offset < 0 || limit <= 0 || offset >= b.length {
		return dst
	}
	return b.appendRows(dst, b.nodeAt(offset+1), offset+1, limit)
}

// appendRows appends up to n rows starting with node x at rank r.
func (b *Board) appendRows(dst []Row, x uint32, r, n int) []Row {
	for ; x != 0 && n > 0; n-- {
		dst = append(dst, Row{Rank: r, Entry: b.entryAt(x)})
		x, r = b.next0(x), r+1
	}
	return dst
}

// Around appends to dst the rows from radius ranks above member to radius
// ranks below it, member's own included, clipped at both ends, or reports
// false where member has no entry. O(log N + radius).
func (b *Board) Around(member uint32, radius int, dst []Row) ([]Row, bool) {
	x := b.nodeOf(member)
	if x == 0 {
		return dst, false
	}
	radius = max(radius, 0)
	r, y, up := b.rankAround(x, radius)
	return b.appendRows(dst, y, r-up, up+radius+1), true
}

// rankAround returns x's rank and the node up ranks above it, up ≤ n. Three
// independent chains of loads run in lockstep so that their cache misses
// overlap: the rank search from the header, the walk back from x, and a walk
// forward from x that only warms the cache for the rows the caller reads next.
func (b *Board) rankAround(x uint32, n int) (rank int, y uint32, up int) {
	k := b.nodeKey(x)
	y, z, down := x, x, 0
	cur, r := uint32(0), 0
	for i := b.level - 1; i >= 0; i-- {
		for {
			y, up = b.stepBack(y, up, n)
			z, down = b.stepForward(z, down, n)
			next, span := b.link(cur, i)
			if next == 0 || !b.before(next, &k) {
				break
			}
			cur, r = next, r+span
		}
	}
	for prev := -1; up != prev; {
		prev = up
		y, up = b.stepBack(y, up, n)
	}
	return r + 1, y, up
}

// stepBack moves y one rank up unless it has moved n already or is first.
func (b *Board) stepBack(y uint32, up, n int) (uint32, int) {
	if up < n {
		if p := b.back(y); p != 0 {
			return p, up + 1
		}
	}
	return y, up
}

// stepForward moves z one rank down unless it has moved n already or is last.
func (b *Board) stepForward(z uint32, down, n int) (uint32, int) {
	if down < n {
		if next := b.next0(z); next != 0 {
			return next, down + 1
		}
	}
	return z, down
}

// Ascend calls fn with each row from rank from on, in rank order, until fn
// returns false. O(log N) to start, O(1) per row. fn must not mutate b.
func (b *Board) Ascend(from int, fn func(Row) bool) {
	from = max(from, 1)
	if from > b.length {
		return
	}
	for x, r := b.nodeAt(from), from; x != 0; x, r = b.next0(x), r+1 {
		if !fn(Row{Rank: r, Entry: b.entryAt(x)}) {
			return
		}
	}
}

// CountBetter returns how many entries have a strictly better (score,
// subscore) pair than the one given: a new entry with that pair would rank
// CountBetter+1 under earliest-first ties. Infinities count as the
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
