package ledger

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rankwire/rankwire/board"
)

// maxDiffs bounds the lines of Diff.
const maxDiffs = 20

// Diff lists how snap differs from the replayed state st, at most 20
// lines, for the audit replay (the hub's Verify); none where their
// snapshot encodings are equal. O(state).
func Diff(st, snap *State) []string {
	a, errA := st.Encode(nil) // in clear, in memory: the personal data compared too
	b, errB := snap.Encode(nil)
	if errA == nil && errB == nil && bytes.Equal(a, b) {
		return nil
	}
	var d []string
	add := func(format string, args ...any) {
		if len(d) < maxDiffs {
			d = append(d, fmt.Sprintf(format, args...))
		}
	}
	if ia, ib := st.ix.Len(), snap.ix.Len(); ia != ib {
		add("member ids: replay %d, snapshot %d", ia, ib)
	}
	for _, name := range unionBoards(st, snap) {
		x, y := st.boards[name], snap.boards[name]
		switch {
		case y == nil:
			add("board %s: in the replay, not in the snapshot", name)
			continue
		case x == nil:
			add("board %s: in the snapshot, not in the replay", name)
			continue
		}
		if sx, sy := settingsJSON(x.settings), settingsJSON(y.settings); sx != sy {
			add("board %s: settings %s in the replay, %s in the snapshot", name, sx, sy)
		}
		if x.seen.len() != y.seen.len() {
			add("board %s: %d idempotency ids in the replay, %d in the snapshot", name, x.seen.len(), y.seen.len())
		}
		diffWindows(name, x, y, st, snap, add)
		diffDisputes(name, x, y, add) // dispute.go
	}
	if len(d) == 0 {
		add("the encodings differ (identity index or idempotency ids)")
	}
	return d
}

// diffWindows adds the differences of board name's windows.
func diffWindows(name string, x, y *boardState, st, snap *State, add func(string, ...any)) {
	keys := append(x.sortedWindows(), y.sortedWindows()...)
	slices.SortFunc(keys, func(p, q windowKey) int {
		if p.kind != q.kind {
			return int(p.kind) - int(q.kind)
		}
		return cmp.Compare(p.start, q.start)
	})
	keys = slices.Compact(keys)
	for _, k := range keys {
		wx, wy := x.windows[k], y.windows[k]
		where := fmt.Sprintf("board %s window %s", name, x.cal.name(k))
		switch {
		case wy == nil:
			add("%s: in the replay (%d entries), not in the snapshot", where, wx.b.Len())
		case wx == nil:
			add("%s: in the snapshot (%d entries), not in the replay", where, wy.b.Len())
		default:
			if wx.seq != wy.seq {
				add("%s: seq %d in the replay, %d in the snapshot", where, wx.seq, wy.seq)
			}
			diffRows(where, wx.b, wy.b, st, snap, add)
		}
	}
}

// diffRows adds the first rank at which two boards' rows differ.
func diffRows(where string, bx, by *board.Board, st, snap *State, add func(string, ...any)) {
	if bx.Len() != by.Len() {
		add("%s: %d entries in the replay, %d in the snapshot", where, bx.Len(), by.Len())
	}
	const page = 1000
	var rx, ry []board.Row
	for off := 0; off < max(bx.Len(), by.Len()); off += page {
		rx, ry = bx.Range(off, page, rx[:0]), by.Range(off, page, ry[:0])
		for i := range max(len(rx), len(ry)) {
			var a, b string
			if i < len(rx) {
				a = rowString(st, rx[i])
			}
			if i < len(ry) {
				b = rowString(snap, ry[i])
			}
			if a != b {
				add("%s: rank %d is %s in the replay, %s in the snapshot", where, off+i+1, orNone(a), orNone(b))
				return
			}
		}
	}
}

func rowString(s *State, r board.Row) string {
	name, _ := s.ix.Label(r.Member)
	return fmt.Sprintf("%s %v/%v", name, r.Score, r.Subscore)
}

func settingsJSON(s Settings) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// unionBoards returns the board names of a and b, sorted.
func unionBoards(a, b *State) []string {
	names := append(a.sortedBoards(), b.sortedBoards()...)
	slices.Sort(names)
	return slices.Compact(names)
}
