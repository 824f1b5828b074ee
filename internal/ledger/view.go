package ledger

import (
	"math"
	"slices"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// View is one board-window of one tenant, valid only while the read lock
// under which it was taken is held (the function given to Hub.Read):
// keep it short and call nothing of the Hub from it. Every method is read-only and
// costs O(log N) plus the rows returned.
type View struct {
	ix       *identity.Index
	w        *window // nil: the window holds nothing (yet, or any more)
	profiles map[uint32]Profile
	final    map[uint32]Profile // the board's profiles at its end (profile.go): they win over profiles
	q        *quarantine        // the board's: whose rows show the review marker; nil: none
}

// Seq returns the board-window's version (0 for a window never written).
func (v View) Seq() uint64 {
	if v.w == nil {
		return 0
	}
	return v.w.seq
}

// Total returns the number of members in the board-window.
func (v View) Total() int {
	if v.w == nil {
		return 0
	}
	return v.w.b.Len()
}

// Top returns up to limit rows from rank offset+1 on.
func (v View) Top(offset, limit int) []Row {
	if v.w == nil || limit <= 0 || offset < 0 {
		return nil
	}
	return v.rows(v.w.b.Range(offset, limit, nil))
}

// Member returns the row of member (an id or alias), or false.
func (v View) Member(member string) (Row, bool) {
	h, ok := v.ix.Resolve(member)
	if !ok || v.w == nil {
		return Row{}, false
	}
	r, ok := v.w.b.Get(h)
	return v.row(r), ok
}

// Around returns the rows from radius ranks above member to radius below,
// member's own included, or false where member has no entry.
func (v View) Around(member string, radius int) ([]Row, bool) {
	h, ok := v.ix.Resolve(member)
	if !ok || v.w == nil {
		return nil, false
	}
	rows, ok := v.w.b.Around(h, radius, nil)
	return v.rows(rows), ok
}

// AtRank returns the row at 1-based rank, or false past either end.
func (v View) AtRank(rank int) (Row, bool) {
	if v.w == nil {
		return Row{}, false
	}
	r, ok := v.w.b.At(rank)
	return v.row(r), ok
}

// Members returns the rows of those members that have one, once each, in
// rank order. O(k log N) for k ids.
func (v View) Members(members []string) []Row {
	var out []Row
	for _, m := range members {
		if r, ok := v.Member(m); ok && !slices.ContainsFunc(out, func(o Row) bool { return o.Rank == r.Rank }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Row) int { return a.Rank - b.Rank })
	return out
}

func (v View) row(r board.Row) Row {
	name, _ := v.ix.Label(r.Member) // retired only on a board no merge folds: an ended tournament
	return Row{Rank: r.Rank, Member: name, Score: r.Score, Subscore: r.Subscore, Profile: profileOf(v.final, v.profiles, r.Member),
		Review: v.q != nil && v.q.underReview(r.Member)}
}

func (v View) rows(rs []board.Row) []Row {
	out := make([]Row, len(rs))
	for i, r := range rs {
		out[i] = v.row(r)
	}
	return out
}

// Page returns up to limit rows from rank offset+1 on, or, where after is
// not nil, from the first entry that orders after it; Page.Next is set
// where more rows follow. O(log N + rows).
func (v View) Page(offset int, after *Cursor, limit int) Page {
	p := Page{Seq: v.Seq(), Total: v.Total()}
	from := offset
	if after != nil {
		from = v.passed(*after)
	}
	p.Rows, p.Next = v.span(from, p.Total, limit)
	return p
}

// ScoreRange returns up to limit rows whose score lies in [lo, hi], in
// rank order, from the first or from the first after the cursor after,
// with Page.Next where more of them follow, and how many entries the
// range holds in all. O(log N + rows).
func (v View) ScoreRange(lo, hi float64, after *Cursor, limit int) (p Page, count int) {
	p.Seq, p.Total = v.Seq(), v.Total()
	if v.w == nil {
		return p, 0
	}
	from, to := v.w.b.ScoreSpan(lo, hi)
	count = to - from
	if after != nil {
		from = max(from, v.passed(*after))
	}
	p.Rows, p.Next = v.span(from, to, limit)
	return p, count
}

// ScoreRank returns the rank a new entry with score and subscore would
// take now, and the board-window's total: it would be the latest entry,
// so it ranks after the entries with an equal pair on an earliest-first
// board and before them on a latest-first one. O(log N).
func (v View) ScoreRank(score, subscore float64) (rank, total int) {
	total, rank = v.Total(), 1
	if v.w != nil {
		newest := board.Entry{Score: score, Subscore: subscore, Seq: math.MaxUint64}
		rank += v.w.b.CountBefore(newest)
	}
	return rank, total
}
