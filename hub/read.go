package hub

import (
	"slices"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// View is one board-window of one tenant, valid only inside the function
// given to Hub.Read, which holds the tenant replica's read lock: keep it
// short and call nothing of the Hub from it. Every method is read-only and
// costs O(log N) plus the rows returned.
type View struct {
	ix       *identity.Index
	w        *window // nil: the window holds nothing (yet, or any more)
	profiles map[uint32]Profile
	q        *quarantine // the board's: whose rows show the review marker; nil: none
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
	return Row{Rank: r.Rank, Member: name, Score: r.Score, Subscore: r.Subscore, Profile: v.profiles[r.Member],
		Review: v.q != nil && v.q.underReview(r.Member)}
}

func (v View) rows(rs []board.Row) []Row {
	out := make([]Row, len(rs))
	for i, r := range rs {
		out[i] = v.row(r)
	}
	return out
}

// Read calls fn with the board-window l names, under the tenant replica's
// read lock (writers wait while fn runs, so fn must be short). ErrNotFound
// for an unknown tenant or board; ErrBadRequest for a window the board does
// not keep. A window with no entries yet reads as empty, seq 0.
func (h *Hub) Read(l Loc, fn func(View) error) error {
	return h.locate(l, func(st *state, bs *boardState, key windowKey) error {
		return fn(View{ix: st.ix, w: bs.windows[key], profiles: st.profiles, q: &bs.quarantine})
	})
}

// readTenant calls fn with tenant's state under its replica's read lock;
// notFound's error (or why the tenant is down) where the tenant is not
// open. notFound is a function so that a read that succeeds formats no
// error: every read of the API comes through here.
func (h *Hub) readTenant(tenant string, notFound func() error, fn func(st *state) error) error {
	r := h.lookup(tenant)
	if r == nil {
		return h.missing(tenant, notFound())
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fn(r.st)
}

// readBoard calls fn with tenant's state and its board under the
// replica's read lock; ErrNotFound for an unknown tenant or board.
func (h *Hub) readBoard(tenant, board string, fn func(st *state, bs *boardState) error) error {
	return h.readTenant(tenant, func() error { return errorf(ErrNotFound, "board %q", board) }, func(st *state) error {
		bs, err := st.board(board)
		if err != nil {
			return err
		}
		return fn(st, bs)
	})
}

// locate finds the board-window l names and calls fn with the tenant's
// state, the board and the window's key, under the replica's read lock.
// ErrBadRequest for an unknown window kind or one the board does not keep;
// ErrNotFound for an unknown tenant or board.
func (h *Hub) locate(l Loc, fn func(st *state, bs *boardState, key windowKey) error) error {
	k, ok := parseKind(l.Window)
	if !ok {
		return errorf(ErrBadRequest, "window: %q is not one of all, day, week, month", clip(l.Window))
	}
	at := l.At
	if at.IsZero() {
		at = h.cfg.Now()
	}
	return h.readBoard(l.Tenant, l.Board, func(st *state, bs *boardState) error {
		if !bs.keeps(k) {
			return errorf(ErrBadRequest, "window: %q is not kept by board %q", k, l.Board)
		}
		return fn(st, bs, keyAt(k, at.UnixMilli()))
	})
}
