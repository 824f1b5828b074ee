package subscriptions

import (
	"slices"

	"github.com/rankwire/rankwire/board"
)

// Window is read access to one board-window, valid only during the call
// that hands it out: the owner of the board holds its read lock meanwhile.
// Every method is read-only.
type Window interface {
	// Board returns the board-window's board, or nil where it holds nothing.
	Board() *board.Board
	// Seq returns the board-window's version.
	Seq() uint64
	// Name returns the external id of member handle h.
	Name(h uint32) (string, bool)
	// Resolve returns the member handle an external id or alias names.
	Resolve(id string) (uint32, bool)
	// Pending returns the changes applied to the board-window since the
	// last Apply for it, oldest first (the next Apply will carry them).
	Pending() []Change
	// Profile returns member handle h's public profile (zero: none). A
	// change of it comes as a Change of the member at its own rank.
	Profile(h uint32) Profile
	// UnderReview reports whether member handle h has a submission held
	// for review; a change of it comes as a Change at the member's rank.
	UnderReview(h uint32) bool
	// Gen returns the board's generation: zero where it does not exist,
	// else a number a board deleted and made again under its name does not
	// keep (EndBoard).
	Gen() uint64
}

// Profile is a member's public profile as rows show it; empty fields are
// left out of the row.
type Profile struct {
	Name, Avatar, Country string
}

// Change is one applied mutation of a board-window: the board's report,
// the board-window's seq after it and its number of entries after it.
type Change struct {
	board.Change
	Seq   uint64
	Total int
}

// span returns the ranks whose occupant c changed, or false. Per
// board.Change, a move changes every rank between the two; an insert shifts
// every rank from the new one to the end, a removal every rank from the old
// one to the former end.
func (c Change) span() (span, bool) {
	o, n := c.OldRank, c.NewRank
	switch {
	case o == 0 && n == 0:
		return span{}, false
	case o == 0:
		return span{n, max(n, c.Total)}, true
	case n == 0:
		return span{o, max(o, c.Total+1)}, true
	}
	return span{min(o, n), max(o, n)}, true
}

// Row is one ranked entry of a view, its member resolved to its external id.
type Row struct {
	Rank     int
	Member   string
	Score    float64
	Subscore float64
	Profile  Profile
	Review   bool
	handle   uint32
}

func (r Row) same(o Row) bool {
	return r.Rank == o.Rank && r.handle == o.handle && r.Score == o.Score && r.Subscore == o.Subscore &&
		r.Profile == o.Profile && r.Review == o.Review
}

// span is a closed range of ranks.
type span struct{ lo, hi int }

func (s span) meets(o span) bool { return s.lo <= o.hi && o.lo <= s.hi }

// state is what a view computes from a board-window: its rows in rank order,
// and what it must be told about (rank spans, member handles, ids that do
// not resolve yet).
type state struct {
	rows    []Row
	spans   []span
	handles []uint32
	waiting []string
}

// compute reads spec's view of w. O(log N + rows) for top, rank and around;
// O(k log N) for k members. Called under the board's read lock.
func compute(spec Spec, w Window) state {
	var st state
	b := w.Board()
	switch spec.Kind {
	case Top:
		st.spans = []span{{spec.Offset + 1, spec.Offset + spec.Limit}}
		if b != nil {
			st.rows = named(w, b.Range(spec.Offset, spec.Limit, nil))
		}
	case Rank:
		st.spans = []span{{spec.Rank, spec.Rank}}
		if r, ok := at(b, spec.Rank); ok {
			st.rows = named(w, []board.Row{r})
		}
	case Around:
		st.around(spec, w, b)
	case Members:
		st.members(spec, w, b)
	}
	return st
}

func at(b *board.Board, rank int) (board.Row, bool) {
	if b == nil {
		return board.Row{}, false
	}
	return b.At(rank)
}

func (st *state) around(spec Spec, w Window, b *board.Board) {
	h, ok := w.Resolve(spec.Member)
	if !ok {
		st.waiting = []string{spec.Member}
		return
	}
	st.handles = []uint32{h}
	if b == nil {
		return
	}
	rows, ok := b.Around(h, spec.Radius, nil)
	if !ok {
		return
	}
	st.rows = named(w, rows)
	for _, r := range rows { // the member's own row: its rank, without another walk
		if r.Member == h {
			st.spans = []span{{max(1, r.Rank-spec.Radius), r.Rank + spec.Radius}}
			break
		}
	}
}

func (st *state) members(spec Spec, w Window, b *board.Board) {
	n := len(spec.Members)
	st.handles = make([]uint32, 0, n)
	st.rows, st.spans = make([]Row, 0, n), make([]span, 0, n)
	for _, id := range spec.Members {
		h, ok := w.Resolve(id)
		if !ok {
			st.waiting = append(st.waiting, id)
			continue
		}
		st.handles = append(st.handles, h)
		if b == nil {
			continue
		}
		if r, ok := b.Get(h); ok && !slices.ContainsFunc(st.rows, func(o Row) bool { return o.Rank == r.Rank }) {
			st.rows = append(st.rows, namedRow(w, r))
			st.spans = append(st.spans, span{r.Rank, r.Rank})
		}
	}
	slices.SortFunc(st.rows, func(a, b Row) int { return a.Rank - b.Rank })
}

// named resolves the members of rs to their external ids.
func named(w Window, rs []board.Row) []Row {
	out := make([]Row, len(rs))
	for i, r := range rs {
		out[i] = namedRow(w, r)
	}
	return out
}

func namedRow(w Window, r board.Row) Row {
	name, _ := w.Name(r.Member)
	return Row{Rank: r.Rank, Member: name, Score: r.Score, Subscore: r.Subscore, Profile: w.Profile(r.Member), Review: w.UnderReview(r.Member), handle: r.Member}
}

// diffRows returns what turns old into new (both in rank order): the rows
// of new that old lacks or holds differently, and the ranks of old that new
// lacks. O(len(old) + len(new)).
func diffRows(old, new []Row) (put []Row, gone []int) {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || i < len(old) && old[i].Rank < new[j].Rank:
			gone = append(gone, old[i].Rank)
			i++
		case i == len(old) || new[j].Rank < old[i].Rank:
			put = append(put, new[j])
			j++
		default:
			if !old[i].same(new[j]) {
				put = append(put, new[j])
			}
			i, j = i+1, j+1
		}
	}
	return put, gone
}
