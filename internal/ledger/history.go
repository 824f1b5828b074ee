package ledger

import "slices"

// Rank history. Two kinds of answer:
//
//   - For a day, week or month kind: the member's final standing in each
//     past window of that kind the board still retains, read from the
//     windows themselves (nothing more is stored).
//   - For the current window: the member's own recent changes, each point
//     taken right after an applied submission of theirs (rank, score and
//     the window's size then). These are kept per board in a ring of at
//     most maxHistory points shared by all its members (oldest overwritten
//     first), each point linked to the member's previous one, so that the
//     memory follows the board's activity, never its members times 100;
//     a member's chain stops where the ring overwrote it. The ring is state:
//     every node records the same points, and snapshots carry it.

// Limits of the rank history.
const (
	MaxHistoryPoints = 100     // points of one answer
	maxHistory       = 1 << 16 // points a board keeps for all its members
	minHistory       = 64      // a board's first ring
)

// HistoryPoint is one point of a member's rank history: Window names a
// past window (its first day, YYYY-MM-DD) for final standings; At is the
// acceptance time (unix ms) of a change in the current window.
type HistoryPoint struct {
	Window string
	At     int64
	Rank   int
	Score  float64
	Total  int
}

// point is one recorded change; prev is 1 + the absolute index of the
// member's previous point (0: none).
type point struct {
	at     int64
	score  float64
	prev   uint64
	member uint32
	rank   uint32
	total  uint32
	window int64 // the primary window's start, so that a new window starts a new history
}

// history is a board's ring of recent changes. Replica goroutine (or the
// board's lane) only.
type history struct {
	pts  []point           // pts[i % len(pts)] holds absolute point i, for i in [next-len(pts), next)
	next uint64            // points ever recorded
	head map[uint32]uint64 // member → 1 + absolute index of its latest point still kept
}

// add records member's change. Amortised O(1); the ring grows by doubling
// up to maxHistory.
func (hs *history) add(p point) {
	if hs.head == nil {
		hs.head = map[uint32]uint64{}
	}
	if hs.next >= uint64(len(hs.pts)) && len(hs.pts) < maxHistory {
		hs.grow()
	}
	i := hs.next % uint64(len(hs.pts))
	if hs.next >= uint64(len(hs.pts)) { // overwriting the oldest point
		old := hs.pts[i]
		if hs.head[old.member] == hs.next-uint64(len(hs.pts))+1 {
			delete(hs.head, old.member) // it was that member's last kept point
		}
	}
	p.prev = hs.head[p.member]
	hs.pts[i] = p
	hs.next++
	hs.head[p.member] = hs.next
}

// grow doubles the ring, keeping every point at its absolute index.
func (hs *history) grow() {
	n := max(minHistory, 2*len(hs.pts))
	pts := make([]point, n)
	for a := hs.next - min(hs.next, uint64(len(hs.pts))); a < hs.next; a++ {
		pts[a%uint64(n)] = hs.pts[a%uint64(len(hs.pts))]
	}
	hs.pts = pts
}

// capFor returns the ring size a board has after recording next points:
// add grows it to the first of 64, 128, ... maxHistory that holds them.
func capFor(next uint64) int {
	c := 0
	for uint64(c) < next && c < maxHistory {
		c = max(minHistory, 2*c)
	}
	return c
}

// kept reports whether absolute index a is still in the ring.
func (hs *history) kept(a uint64) bool {
	return a < hs.next && hs.next-a <= uint64(len(hs.pts))
}

// recent returns member's last points in window start, newest first, at
// most MaxHistoryPoints.
func (hs *history) recent(member uint32, window int64) []HistoryPoint {
	var out []HistoryPoint
	for ref := hs.head[member]; ref != 0 && hs.kept(ref-1) && len(out) < MaxHistoryPoints; {
		p := hs.pts[(ref-1)%uint64(len(hs.pts))]
		if p.member != member || p.window != window {
			break
		}
		out = append(out, HistoryPoint{At: p.at, Rank: int(p.rank), Score: p.score, Total: int(p.total)})
		ref = p.prev
	}
	return out
}

// each calls fn with every kept point, oldest first: the snapshot order.
func (hs *history) each(fn func(point)) {
	for a := hs.next - min(hs.next, uint64(len(hs.pts))); a < hs.next; a++ {
		fn(hs.pts[a%uint64(len(hs.pts))])
	}
}

// History returns member's rank history on board at now (unix ms) for
// the window kind named window: final standings in each past window of a
// day, week or month kind the board retains, newest first; for all (or
// the board's primary kind with now in the current window), the member's
// own recent changes in the current primary window, newest first.
// ErrNotFound for an unknown board or member; ErrBadRequest for a kind
// the board does not keep. Read lock.
func (s *State) History(board, window, member string, now int64) ([]HistoryPoint, error) {
	k, err := windowKind(window)
	if err != nil {
		return nil, err
	}
	bs, err := s.board(board)
	if err != nil {
		return nil, err
	}
	if k != kindAll && !bs.keeps(k) {
		return nil, errorf(ErrBadRequest, "window: the board keeps no %s windows", k)
	}
	hd, ok := s.ix.Resolve(member)
	if !ok {
		return nil, errorf(ErrNotFound, "member %q", member)
	}
	if k == kindAll {
		return bs.history.recent(hd, bs.cal.keyAt(bs.settings.primaryKind(), now).start), nil
	}
	return bs.pastStandings(k, hd, bs.cal.keyAt(k, now).start), nil
}

// pastStandings returns member h's final standing in each retained window
// of kind k that started before current, newest first.
func (bs *boardState) pastStandings(k kind, h uint32, current int64) []HistoryPoint {
	var keys []windowKey
	for key := range bs.windows {
		if key.kind == k && key.start < current {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b windowKey) int { return b.compare(a) })
	var out []HistoryPoint
	for _, key := range keys {
		w := bs.windows[key]
		if row, ok := w.b.Get(h); ok {
			out = append(out, HistoryPoint{Window: bs.cal.date(key),
				Rank: row.Rank, Score: row.Score, Total: w.b.Len()})
		}
	}
	return out
}
