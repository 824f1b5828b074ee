package ledger

import (
	"fmt"
	"slices"
	"strings"
)

// The read side of a State. Every method here is read-only and expects
// the read lock under which the state is applied (the hub's replica lock)
// held by the caller; times are unix ms and decide which day, week or
// month window a read means, never what the state holds.

// View returns the window kind named window ("" means all) of board that
// holds time at. ErrNotFound for an unknown board; ErrBadRequest for a
// window kind the board does not keep. A window with no entries yet reads
// as empty, seq 0. O(1).
func (s *State) View(board, window string, at int64) (View, error) {
	bs, key, err := s.locate(board, window, at)
	if err != nil {
		return View{}, err
	}
	return s.view(bs, key), nil
}

// FeedWindow is View for a live view: the Window also names the window's
// instance and its pending changes, so a live view can join the change
// feed exactly where the board stands. Same errors as View.
func (s *State) FeedWindow(board, window string, at int64) (Window, error) {
	_, key, err := s.locate(board, window, at)
	if err != nil {
		return Window{}, err
	}
	return s.windowOf(feedKey{board, key}), nil
}

func (s *State) locate(board, window string, at int64) (*boardState, windowKey, error) {
	k, err := windowKind(window)
	if err != nil {
		return nil, windowKey{}, err
	}
	bs, err := s.board(board)
	if err != nil {
		return nil, windowKey{}, err
	}
	if !bs.keeps(k) {
		return nil, windowKey{}, errorf(ErrBadRequest, "window: %q is not kept by board %q", k, board)
	}
	return bs, bs.cal.keyAt(k, at), nil
}

func (s *State) view(bs *boardState, key windowKey) View {
	return View{ix: s.ix, w: bs.windows[key], profiles: s.profiles, final: bs.final, q: &bs.quarantine}
}

// HasBoard reports whether board exists. O(1).
func (s *State) HasBoard(board string) bool { return s.boards[board] != nil }

// NumBoards returns how many boards the tenant has. O(1).
func (s *State) NumBoards() int { return len(s.boards) }

// Members returns how many member ids the tenant holds. O(1).
func (s *State) Members() int { return s.ix.Len() }

// BoardInfo returns board's settings and the size of its primary window
// at now. ErrNotFound for an unknown board. O(windows kept).
func (s *State) BoardInfo(board string, now int64) (BoardInfo, error) {
	bs, err := s.board(board)
	if err != nil {
		return BoardInfo{}, err
	}
	return info(board, bs, now), nil
}

func info(name string, bs *boardState, now int64) BoardInfo {
	out := BoardInfo{Name: name, Settings: bs.settings}
	out.Settings.Windows = slices.Clone(bs.settings.Windows)
	if w := bs.windows[bs.cal.keyAt(bs.settings.primaryKind(), now)]; w != nil {
		out.Members = w.b.Len()
	}
	return out
}

// Boards lists the tenant's boards by name, as BoardInfo at now. O(B log B).
func (s *State) Boards(now int64) []BoardInfo {
	out := make([]BoardInfo, 0, len(s.boards))
	for name, bs := range s.boards {
		out = append(out, info(name, bs, now))
	}
	slices.SortFunc(out, func(a, b BoardInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// BoardsPage lists up to limit of the boards whose names sort after after
// and pass keep (nil keeps every board), in name order, and reports
// whether more such boards follow. Cost: O(B + k log k) for the tenant's
// B boards and the k kept after the cursor.
func (s *State) BoardsPage(after string, limit int, keep func(name string) bool, now int64) ([]BoardInfo, bool) {
	if limit <= 0 {
		return nil, false
	}
	names := make([]string, 0, min(len(s.boards), 4*limit))
	for name := range s.boards {
		if name > after && (keep == nil || keep(name)) {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, strings.Compare)
	more := len(names) > limit
	names = names[:min(len(names), limit)]
	out := make([]BoardInfo, len(names))
	for i, name := range names {
		out[i] = info(name, s.boards[name], now)
	}
	return out, more
}

// Identity returns the member an id or alias resolves to, with its
// aliases, or false. O(aliases).
func (s *State) Identity(id string) (Identity, bool) {
	h, ok := s.ix.Resolve(id)
	if !ok {
		return Identity{}, false
	}
	name, _ := s.ix.Name(h)
	return Identity{Member: name, Aliases: s.ix.Aliases(h)}, true
}

// Quarantine returns up to limit (1..MaxHeldPage) of board's held
// submissions with QIDs after after (0: from the first), oldest first,
// and whether more follow. ErrBadRequest for a limit out of range;
// ErrNotFound for an unknown board. O(log held + limit).
func (s *State) Quarantine(board string, after uint64, limit int) ([]Held, bool, error) {
	if limit < 1 || limit > MaxHeldPage {
		return nil, false, errorf(ErrBadRequest, "limit: %d is not in 1..%d", limit, MaxHeldPage)
	}
	bs, err := s.board(board)
	if err != nil {
		return nil, false, err
	}
	rows, more := bs.quarantine.page(after, limit)
	return rows, more, nil
}

// CheckOpen fails with ErrConflict where board is outside its time at now
// (tournament.go); nil for an unknown board. The hub's pre-check: apply
// decides again by the event's acceptance time.
func (s *State) CheckOpen(board string, now int64) error {
	if bs := s.boards[board]; bs != nil {
		return bs.checkOpen(now)
	}
	return nil
}

// CheckMemberRoom fails with ErrLimit, naming member, where n new members
// could take the tenant's member handles past its limit (SetMaxMembers):
// checked at ingest so that a submission is refused with a clear error
// rather than applied unranked. Apply checks again in stream order.
func (s *State) CheckMemberRoom(n int) error {
	if have := s.ix.MaxHandle(); uint64(have)+uint64(n) > uint64(s.maxMembers) {
		return errorf(ErrLimit, "member: the tenant holds %d member ids; the most is %d", have, s.maxMembers)
	}
	return nil
}

// HeldEver returns how many submissions board has quarantined so far,
// decided or not (its last QID); 0 for an unknown board. O(1).
func (s *State) HeldEver(board string) uint64 {
	if bs := s.boards[board]; bs != nil {
		return bs.quarantine.last
	}
	return 0
}

// Check verifies the invariants of every board-window (board.Check), for
// tests and fuzzing. O(state).
func (s *State) Check() error {
	for _, name := range s.sortedBoards() {
		bs := s.boards[name]
		for _, k := range bs.sortedWindows() {
			if err := bs.windows[k].b.Check(); err != nil {
				return fmt.Errorf("board %s window %s: %w", name, bs.cal.name(k), err)
			}
		}
	}
	return nil
}

// KeptIDs returns how many idempotency ids board keeps; 0 for an unknown
// board. O(1).
func (s *State) KeptIDs(board string) int {
	if bs := s.boards[board]; bs != nil {
		return bs.seen.len()
	}
	return 0
}
