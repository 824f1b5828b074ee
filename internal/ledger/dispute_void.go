package ledger

import (
	"github.com/rankwire/rankwire/board"
)

// Voiding one submission. The ledger keeps no submission once applied (a
// board-window holds one entry per member), so it cannot recompute an
// entry by itself. The admin node does, ahead of the event: a VoidPlanner
// (dispute_plan.go) replays the tenant's log up to the replica's sequence
// and computes, for every window of the board that counted the voided
// submission, the member's entry from its other submissions. The EvVoid
// event carries those entries, each with the entry the planner saw (Was),
// so apply is an assignment that every node and every replay performs
// alike; where the member's entry changed between the plan and the event
// (a later submission on a live board, a merge), apply refuses it and the
// hub plans again.

// MaxVoids is the most submissions one board may have voided.
const MaxVoids = 10_000

// ErrVoidStale is the class of the conflict of an EvVoid whose member's
// entry changed between its plan and its apply: the hub plans again.
// Of class ErrConflict.
var ErrVoidStale = ErrConflict.Sub("seq: the member's entry changed while the void was prepared", nil)

// voidKey names a voided submission: the seq its result carried and the
// start of its primary window (0 for all), which together name one
// applied submission of a board.
type voidKey struct {
	window int64
	seq    uint64
}

// Void is an EvVoid's content: which submission, whose, and the member's
// entries as the planner recomputed them without it.
type Void struct {
	Seq     uint64      `json:"s"`           // the seq the voided submission's result carried
	Window  int64       `json:"w,omitempty"` // start of the submission's primary window (unix ms; 0: all)
	Member  string      `json:"m"`           // the member's canonical id when planned
	Entries []VoidEntry `json:"e,omitempty"` // the board-windows that counted the submission
}

// VoidEntry is one board-window's entry of the member: as the planner saw
// it and as it is without the voided submission.
type VoidEntry struct {
	Kind  string      `json:"k"`             // window kind: all, day, week, month
	Start int64       `json:"st,omitempty"`  // window start (unix ms UTC; 0 for all)
	Was   *EntryScore `json:"was,omitempty"` // the entry the plan was computed from; nil: none
	Now   *EntryScore `json:"now,omitempty"` // the entry without the submission; nil: none left
}

// EntryScore is a member's entry in a board-window: its score, subscore
// and the sequence at which it reached them (the tie-break).
type EntryScore struct {
	Score    float64 `json:"s"`
	Subscore float64 `json:"ss,omitempty"`
	Seq      uint64  `json:"q"`
}

// entryScore returns member h's entry in b, or nil where it has none.
func entryScore(b *board.Board, h uint32) *EntryScore {
	row, ok := b.Get(h)
	if !ok {
		return nil
	}
	return &EntryScore{Score: row.Score, Subscore: row.Subscore, Seq: row.Seq}
}

// sameEntry reports whether two entries (nil: none) are equal.
func sameEntry(a, b *EntryScore) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// applyVoid assigns ev.Void's entries to the member's board-windows. It
// refuses, leaving the state as it was, where the board was settled, the
// submission was voided already, or an entry is no longer the one the plan
// saw (ErrConflict naming seq).
func (s *State) applyVoid(seq uint64, ev *Event) error {
	v := ev.Void
	if v == nil {
		return errorf(ErrBadRequest, "seq: missing")
	}
	target := *ev // disputeTarget resolves Member; the event itself stays as stored
	target.Member = v.Member
	bs, h, err := s.disputeTarget(&target)
	if err != nil {
		return err
	}
	key := voidKey{v.Window, v.Seq}
	if _, done := bs.disputes.voided[key]; done {
		return errorf(ErrConflict, "seq: %d was already voided", v.Seq)
	}
	if len(bs.disputes.voided) >= MaxVoids {
		return errorf(ErrLimit, "seq: the board has %d voided submissions, its limit", MaxVoids)
	}
	ws, err := bs.voidWindows(v, h)
	if err != nil {
		return err
	}
	for i, w := range ws {
		if w != nil {
			s.assignEntry(ev.Board, w, h, v.Entries[i].Now)
		}
	}
	if bs.disputes.voided == nil {
		bs.disputes.voided = map[voidKey]struct{}{}
	}
	bs.disputes.voided[key] = struct{}{}
	s.amend(bs, seq, &target, ActionVoid, h)
	bs.disputes.actions[len(bs.disputes.actions)-1].Voided = v.Seq
	return nil
}

// voidWindows returns the board-windows v assigns, by entry (nil where the
// window is gone, dropped by retention since the plan), after checking
// that each holds the entry the plan saw.
func (bs *boardState) voidWindows(v *Void, h uint32) ([]*window, error) {
	ws := make([]*window, len(v.Entries))
	for i, e := range v.Entries {
		k, ok := parseKind(e.Kind)
		if !ok || e.Kind == "" {
			return nil, errorf(ErrBadRequest, "seq: window kind %q", Clip(e.Kind))
		}
		w := bs.windows[windowKey{k, e.Start}]
		if w == nil {
			continue
		}
		if !sameEntry(entryScore(w.b, h), e.Was) {
			return nil, errorf(ErrVoidStale, "seq: the member's entry changed while the void of %d was prepared; try again", v.Seq)
		}
		ws[i] = w
	}
	return ws, nil
}

// assignEntry makes now member h's entry in w (nil: no entry), as one
// change of the window.
func (s *State) assignEntry(name string, w *window, h uint32, now *EntryScore) {
	var cs []board.Change
	if c, gone := w.b.Remove(h); gone {
		cs = append(cs, c)
	}
	if now != nil {
		w.reserve()
		c, err := w.b.Submit(board.Submission{Member: h, Score: now.Score, Subscore: now.Subscore, Seq: now.Seq})
		if err == nil {
			cs = append(cs, c)
		}
	}
	w.seq++
	s.feed.note(name, w, cs...)
}
