package ledger

import (
	"encoding/binary"
	"math"

	"github.com/rankwire/rankwire/board"
)

// Cursor marks a position in a board-window's order: just after one entry
// (its score, subscore, sequence and member). A page read from a cursor
// starts at the first entry that orders after that position now, so rows
// moving above it do not shift the next page. It is a position, not a
// snapshot: an entry that moves from below the cursor to above it is not
// seen again on later pages, and one that moves down past it is seen twice.
//
// Its bytes (MarshalBinary) hold the entry's sequence and member handle in
// the clear: they are never shown to a client as they are. The edge (api)
// seals them with authenticated encryption bound to the tenant before a
// client sees them, and opens them before UnmarshalBinary; the ledger stays
// pure (no key, no randomness here).
type Cursor struct{ e board.Entry }

// cursorVersion leads a cursor's bytes, so that a later layout can be told
// apart.
const cursorVersion = 1

// CursorLen is the size of a cursor's bytes: version, score, subscore,
// sequence, member.
const CursorLen = 1 + 8 + 8 + 8 + 4

// MarshalBinary returns the cursor's CursorLen bytes. It never fails.
func (c Cursor) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, CursorLen)
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.e.Score))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.e.Subscore))
	b = binary.BigEndian.AppendUint64(b, c.e.Seq)
	b = binary.BigEndian.AppendUint32(b, c.e.Member)
	return b, nil
}

// UnmarshalBinary reads bytes MarshalBinary wrote into c; ErrBadRequest
// where b is not such bytes (the caller names the parameter), c unchanged.
func (c *Cursor) UnmarshalBinary(b []byte) error {
	if len(b) != CursorLen || b[0] != cursorVersion {
		return errorf(ErrBadRequest, "not a cursor this gateway wrote")
	}
	e := board.Entry{
		Score:    math.Float64frombits(binary.BigEndian.Uint64(b[1:])),
		Subscore: math.Float64frombits(binary.BigEndian.Uint64(b[9:])),
		Seq:      binary.BigEndian.Uint64(b[17:]),
		Member:   binary.BigEndian.Uint32(b[25:]),
	}
	if !finite(e.Score) || !finite(e.Subscore) || e.Member > board.MaxMember {
		return errorf(ErrBadRequest, "not a cursor this gateway wrote")
	}
	c.e = e
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// passed returns how many of the board-window's entries order at or before
// c's position: the rows a page read from c skips.
func (v View) passed(c Cursor) int {
	if v.w == nil {
		return 0
	}
	n := v.w.b.CountBefore(c.e)
	if r, ok := v.w.b.Get(c.e.Member); ok && r.Entry == c.e {
		n++ // the entry is still where the cursor stopped: skip it too
	}
	return n
}

// span returns up to limit rows from rank from+1 on, stopping before rank
// end+1, and a cursor after the last of them where rows remain before end.
func (v View) span(from, end, limit int) ([]Row, *Cursor) {
	if v.w == nil || limit <= 0 || from >= end {
		return nil, nil
	}
	n := min(limit, end-from)
	rs := v.w.b.Range(from, n, nil)
	var next *Cursor
	if from+n < end && len(rs) > 0 {
		next = &Cursor{e: rs[len(rs)-1].Entry}
	}
	return v.rows(rs), next
}
