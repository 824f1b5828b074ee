package hub

import (
	"math"
	"slices"
	"strings"

	"github.com/rankwire/rankwire/board"
)

// Top returns up to limit rows from rank offset+1 on, or, where after is
// not nil, from the first entry that orders after it; Page.Next is set
// where more rows follow. See Read for errors.
func (h *Hub) Top(l Loc, offset int, after *Cursor, limit int) (Page, error) {
	var p Page
	err := h.Read(l, func(v View) error {
		p.Seq, p.Total = v.Seq(), v.Total()
		from := offset
		if after != nil {
			from = v.passed(*after)
		}
		p.Rows, p.Next = v.span(from, p.Total, limit)
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
		p.Seq, p.Total = v.Seq(), v.Total()
		if v.w == nil {
			return nil
		}
		from, to := v.w.b.ScoreSpan(lo, hi)
		count = to - from
		if after != nil {
			from = max(from, v.passed(*after))
		}
		p.Rows, p.Next = v.span(from, to, limit)
		return nil
	})
	return p, count, err
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
	err = h.readBoard(tenant, board, func(_ *state, bs *boardState) error {
		info = h.infoLocked(board, bs)
		return nil
	})
	return info, err
}

// Boards lists the tenant's boards by name. O(boards).
func (h *Hub) Boards(tenant string) []BoardInfo {
	r := h.lookup(tenant)
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]BoardInfo, 0, len(r.st.boards))
	for name, bs := range r.st.boards {
		out = append(out, h.infoLocked(name, bs))
	}
	slices.SortFunc(out, func(a, b BoardInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (h *Hub) infoLocked(name string, bs *boardState) BoardInfo {
	info := BoardInfo{Name: name, Settings: bs.settings}
	info.Settings.Windows = slices.Clone(bs.settings.Windows)
	key := keyAt(bs.settings.primaryKind(), h.cfg.Now().UnixMilli())
	if w := bs.windows[key]; w != nil {
		info.Members = w.b.Len()
	}
	return info
}

// Identity returns the member an id or alias resolves to, with its aliases,
// or ErrNotFound.
func (h *Hub) Identity(tenant, id string) (ident Identity, err error) {
	notFound := func() error { return errorf(ErrNotFound, "identity %q", id) }
	err = h.readTenant(tenant, notFound, func(st *state) error {
		hd, ok := st.ix.Resolve(id)
		if !ok {
			return notFound()
		}
		name, _ := st.ix.Name(hd)
		ident = Identity{Member: name, Aliases: st.ix.Aliases(hd)}
		return nil
	})
	return ident, err
}

// ScoreRank returns the rank a new entry with score and subscore would take
// now, and the board-window's total: it would be the latest entry, so it
// ranks after the entries with an equal pair on an earliest-first board and
// before them on a latest-first one. See Read for errors.
func (h *Hub) ScoreRank(l Loc, score, subscore float64) (rank, total int, err error) {
	err = h.Read(l, func(v View) error {
		total, rank = v.Total(), 1
		if v.w != nil {
			newest := board.Entry{Score: score, Subscore: subscore, Seq: math.MaxUint64}
			rank += v.w.b.CountBefore(newest)
		}
		return nil
	})
	return rank, total, err
}
