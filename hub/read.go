package hub

import (
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Reads. Every read takes the tenant replica's read lock for one call of
// the ledger's read side (internal/ledger/read.go) and lets go: writers
// wait while it runs, a read waits for at most one slice of an apply.
// Unknown tenants answer ErrNotFound (or, while a tenant is down, why).

// Loc addresses one board-window of a tenant. Window "" means all; At
// picks a past day, week or month window (any time inside it); zero At
// means the current window by Config.Now.
type Loc struct {
	Tenant string
	Board  string
	Window string
	At     time.Time
	// Date (YYYY-MM-DD, validated), where set, wins over At: the window
	// holding that date of the board's calendar (its time zone's), found
	// under the same lock as the read.
	Date string
}

// Read calls fn with the board-window l names, under the tenant replica's
// read lock (writers wait while fn runs, so fn must be short). ErrNotFound
// for an unknown tenant or board; ErrBadRequest for a window the board does
// not keep. A window with no entries yet reads as empty, seq 0.
func (h *Hub) Read(l Loc, fn func(View) error) error {
	return readAt(h, l, (*ledger.State).View, fn)
}

// ReadWindow calls fn with the board-window l names, under the tenant's
// read lock, as Read does (same errors); the Window also names the window's
// instance and its pending changes, so a live view can join the feed
// exactly where the board stands.
func (h *Hub) ReadWindow(l Loc, fn func(Window) error) error {
	return readAt(h, l, (*ledger.State).FeedWindow, fn)
}

// readAt calls fn with what get finds at the board-window l names (a
// View or a Window), under the tenant's read lock. Zero l.At means now.
func readAt[T any](h *Hub, l Loc, get func(*ledger.State, string, string, int64) (T, error), fn func(T) error) error {
	if err := ledger.CheckWindow(l.Window); err != nil {
		return err
	}
	at := l.At
	if at.IsZero() {
		at = h.cfg.Now()
	}
	return h.reg.readBoard(l.Tenant, l.Board, func(st *ledger.State) error {
		ms, err := st.DateAt(l.Board, l.Date, at.UnixMilli())
		if err != nil {
			return err
		}
		v, err := get(st, l.Board, l.Window, ms)
		if err != nil {
			return err
		}
		return fn(v)
	})
}

// Top returns up to limit rows from rank offset+1 on, or, where after is
// not nil, from the first entry that orders after it; Page.Next is set
// where more rows follow. See Read for errors.
func (h *Hub) Top(l Loc, offset int, after *Cursor, limit int) (p Page, err error) {
	err = h.Read(l, func(v View) error {
		p = v.Page(offset, after, limit)
		return nil
	})
	return p, err
}

// ScoreRange returns up to limit rows whose score lies in [lo, hi], in rank
// order, from the first or from the first after the cursor after, with
// Page.Next where more of them follow, and how many entries the range
// holds in all. O(log N + rows). See Read for errors.
func (h *Hub) ScoreRange(l Loc, lo, hi float64, after *Cursor, limit int) (p Page, count int, err error) {
	err = h.Read(l, func(v View) error {
		p, count = v.ScoreRange(lo, hi, after, limit)
		return nil
	})
	return p, count, err
}

// ScoreRank returns the rank a new entry with score and subscore would take
// now, and the board-window's total: it would be the latest entry, so it
// ranks after the entries with an equal pair on an earliest-first board and
// before them on a latest-first one. See Read for errors.
func (h *Hub) ScoreRank(l Loc, score, subscore float64) (rank, total int, err error) {
	err = h.Read(l, func(v View) error {
		rank, total = v.ScoreRank(score, subscore)
		return nil
	})
	return rank, total, err
}

// Member returns member's row (an id or alias) as a one-row Page, or
// ErrNotFound.
func (h *Hub) Member(l Loc, member string) (Page, error) {
	return h.page(l, func(v View) ([]Row, error) {
		r, ok := v.Member(member)
		if !ok {
			return nil, errorf(ErrNotFound, "member %q", member)
		}
		return []Row{r}, nil
	})
}

// Around returns up to radius rows above and below member, its own
// included, or ErrNotFound.
func (h *Hub) Around(l Loc, member string, radius int) (Page, error) {
	return h.page(l, func(v View) ([]Row, error) {
		rows, ok := v.Around(member, radius)
		if !ok {
			return nil, errorf(ErrNotFound, "member %q", member)
		}
		return rows, nil
	})
}

// AtRank returns the row at rank as a one-row Page, or ErrNotFound past
// the end.
func (h *Hub) AtRank(l Loc, rank int) (Page, error) {
	return h.page(l, func(v View) ([]Row, error) {
		r, ok := v.AtRank(rank)
		if !ok {
			return nil, errorf(ErrNotFound, "rank %d", rank)
		}
		return []Row{r}, nil
	})
}

// Members returns the rows of those members that have one, in rank order.
func (h *Hub) Members(l Loc, members []string) (Page, error) {
	return h.page(l, func(v View) ([]Row, error) { return v.Members(members), nil })
}

func (h *Hub) page(l Loc, rows func(View) ([]Row, error)) (Page, error) {
	var p Page
	err := h.Read(l, func(v View) (err error) {
		p.Seq, p.Total = v.Seq(), v.Total()
		p.Rows, err = rows(v)
		return err
	})
	return p, err
}

// Board returns one board's settings and the size of its current primary
// window, or ErrNotFound.
func (h *Hub) Board(tenant, board string) (info BoardInfo, err error) {
	now := h.cfg.Now().UnixMilli()
	err = h.reg.readBoard(tenant, board, func(st *ledger.State) (err error) {
		info, err = st.BoardInfo(board, now)
		return err
	})
	return info, err
}

// Boards lists the tenant's boards by name; none for an unknown tenant.
// O(boards).
func (h *Hub) Boards(tenant string) (out []BoardInfo) {
	now := h.cfg.Now().UnixMilli()
	_ = h.reg.readTenant(tenant, nil, func(st *ledger.State) error {
		out = st.Boards(now)
		return nil
	})
	return out
}

// BoardsPage lists up to limit of the tenant's boards whose names sort
// after after ("" for the first page) and pass keep (nil keeps every
// board), in name order, and reports whether more such boards follow. The
// last name of a page is the cursor of the next: a cursor is a position in
// the name order, so boards created or deleted meanwhile never shift a
// page. An unknown tenant has no boards. Cost: O(B + k log k) for the
// tenant's B boards and the k kept after the cursor, under the replica's
// read lock (about a millisecond at 10,000 boards). Safe for concurrent
// use.
func (h *Hub) BoardsPage(tenant, after string, limit int, keep func(name string) bool) (out []BoardInfo, more bool) {
	now := h.cfg.Now().UnixMilli()
	_ = h.reg.readTenant(tenant, nil, func(st *ledger.State) error {
		out, more = st.BoardsPage(after, limit, keep, now)
		return nil
	})
	return out, more
}

// Identity returns the member an id or alias resolves to, with its
// aliases, as a token of reach r reads it (Reach{}: every board):
// ErrNotFound, as for an id that names nobody, unless the member ranks on a
// board r reaches (ledger.State.MemberReachable): a scoped token learns
// nothing of members outside its boards, not even that they exist.
func (h *Hub) Identity(tenant, id string, r Reach) (ident Identity, err error) {
	notFound := func() error { return errorf(ErrNotFound, "identity %q", id) }
	err = h.reg.readTenant(tenant, notFound, func(st *ledger.State) error {
		var ok bool
		if ident, ok = st.Identity(id); !ok || !st.MemberReachable(id, r) {
			return notFound()
		}
		return nil
	})
	return ident, err
}

// History returns member's rank history on board for the window kind of
// l.Window: final standings in each past window of a day, week or month
// kind the board retains, newest first; for all (or the board's primary
// kind with l.At in the current window), the member's own recent changes
// in the current primary window, newest first. ErrNotFound for an unknown
// board or member; ErrBadRequest for a kind the board does not keep.
func (h *Hub) History(l Loc, member string) (pts []HistoryPoint, err error) {
	if err := ledger.CheckWindow(l.Window); err != nil {
		return nil, err
	}
	now := h.cfg.Now().UnixMilli()
	err = h.reg.readBoard(l.Tenant, l.Board, func(st *ledger.State) (err error) {
		pts, err = st.History(l.Board, l.Window, member, now)
		return err
	})
	return pts, err
}

// Quarantine returns up to limit (1..MaxHeldPage) of board's held
// submissions with QIDs after after (0: from the first), oldest first, and
// whether more follow. ErrNotFound for an unknown board.
func (d Disputes) Quarantine(tenant, board string, after uint64, limit int) (rows []Held, more bool, err error) {
	h := d.h
	if limit < 1 || limit > MaxHeldPage {
		return nil, false, errorf(ErrBadRequest, "limit: %d is not in 1..%d", limit, MaxHeldPage)
	}
	err = h.reg.readBoard(tenant, board, func(st *ledger.State) (err error) {
		rows, more, err = st.Quarantine(board, after, limit)
		return err
	})
	return rows, more, err
}

// Standings returns the first limit rows of board's standings from offset,
// each with its prize: its primary window (the window in which its end
// falls, once it ended). ErrNotFound for an unknown board. Cost: as Top.
func (d Disputes) Standings(tenant, board string, offset, limit int) (out Standings, err error) {
	h := d.h
	now := h.cfg.Now().UnixMilli()
	err = h.reg.readBoard(tenant, board, func(st *ledger.State) (err error) {
		out, err = st.Standings(board, now, offset, limit)
		return err
	})
	return out, err
}

// readTenant calls fn with tenant's state under its replica's read lock;
// notFound's error (or why the tenant is down) where the tenant is not
// open, nil where notFound is nil. notFound is a function so that a read
// that succeeds formats no error: every read of the API comes through here.
func (g *registry) readTenant(tenant string, notFound func() error, fn func(st *ledger.State) error) error {
	r := g.lookup(tenant)
	if r == nil {
		if notFound == nil {
			return nil
		}
		return g.missing(tenant, notFound())
	}
	if err := r.fp.err(r.applied.Load()); err != nil { // a diverged or catching-up copy serves nothing (fingerprints.go)
		return err
	}
	return r.read(fn)
}

// readBoard is readTenant where an unknown tenant answers as an unknown
// board does: ErrNotFound naming board.
func (g *registry) readBoard(tenant, board string, fn func(st *ledger.State) error) error {
	return g.readTenant(tenant, func() error { return errorf(ErrNotFound, "board %q", board) }, fn)
}
