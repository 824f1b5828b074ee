package ledger

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// Disputes and settlement. A casino settles disputes between a board's
// end and its payout: an admin may disqualify a member (out of the
// standings: everyone ranked below moves up one and the prizes pass down
// with them) or reinstate one, while the board is live or ended, until an
// admin settles it (payout is done). Each is an event (EvDisqualify,
// EvReinstate, EvSettle) carrying the acting token's sub and a reason;
// apply reads nothing else, so every node and every audit replay arrives at
// the same standings. A disqualification changes no window: it is an
// overlay that Standings applies, so reinstating restores the member's
// entry exactly as it was. Each accepted amendment bumps the board's
// revision; each action is kept, bounded, in the board's admin log
// (AdminActions), which snapshots carry.

// Limits of the disputes.
const (
	MaxReasonLen    = 256  // bytes of an admin action's reason
	MaxAdminActions = 1000 // admin actions a board keeps; the oldest go first
)

// The admin actions, as AdminAction.Action names them.
const (
	ActionDisqualify = "disqualify"
	ActionReinstate  = "reinstate"
	ActionSettle     = "settle"
	ActionVoid       = "void"
	ActionApprove    = "approve" // a held submission ranked (rules.go)
	ActionReject     = "reject"  // a held submission dropped
)

// AdminAction is one admin action on a board: who (the token's sub), what,
// when (acceptance time, unix ms) and why. Seq, the event's stream
// sequence, orders and pages them.
type AdminAction struct {
	Seq      uint64
	At       int64
	Action   string
	Member   string // the member acted on; "" for settle
	Sub      string // the acting token's sub claim ("" where it had none)
	Reason   string
	Revision int    // the board's revision after the action
	Voided   uint64 // void: the seq the voided submission's result carried; 0 otherwise
	QID      uint64 // approve, reject: the quarantine id decided; 0 otherwise
}

// ref is a's one numeric subject, as snapshots keep it: Voided for a void,
// QID for a decision (an action has at most one of them).
func (a AdminAction) ref() uint64 { return max(a.Voided, a.QID) }

// setRef sets a's numeric subject read from a snapshot, by its action.
func (a *AdminAction) setRef(v uint64) {
	if a.Action == ActionApprove || a.Action == ActionReject {
		a.QID = v
		return
	}
	a.Voided = v
}

// disputes is a board's amendments. Replica goroutine only.
type disputes struct {
	disq     map[uint32]struct{}  // disqualified member handles
	revision int                  // amendments applied: 0 for standings as the submissions made them
	settled  bool                 // an admin settled the board: nothing changes any more
	settleAt int64                // when (unix ms), where settled
	actions  []AdminAction        // oldest first, at most MaxAdminActions
	voided   map[voidKey]struct{} // the voided submissions (dispute_void.go), at most MaxVoids
}

// disqualified reports whether member h is disqualified. O(1).
func (d *disputes) disqualified(h uint32) bool {
	_, ok := d.disq[h]
	return ok
}

// record appends an action, dropping one past MaxAdminActions: the oldest
// quarantine decision where there is one, else the oldest action. A board
// under review may see thousands of decisions; they must not push its
// disqualifications, voids and settlement (what changed the standings)
// out of the audit. O(MaxAdminActions) at the cap.
func (d *disputes) record(a AdminAction) {
	if len(d.actions) == MaxAdminActions {
		drop := slices.IndexFunc(d.actions, func(x AdminAction) bool {
			return x.Action == ActionApprove || x.Action == ActionReject
		})
		d.actions = slices.Delete(d.actions, max(drop, 0), max(drop, 0)+1)
	}
	d.actions = append(d.actions, a)
}

// CheckReason fails with ErrBadRequest where reason is empty, too long or
// not printable UTF-8: every admin action says why.
func CheckReason(reason string) error {
	switch {
	case reason == "" || len(reason) > MaxReasonLen:
		return errorf(ErrBadRequest, "reason: %d bytes, want 1..%d", len(reason), MaxReasonLen)
	case !utf8.ValidString(reason) || hasControl(reason):
		return errorf(ErrBadRequest, "reason: invalid UTF-8 or a control character")
	}
	return nil
}

// checkUnsettled fails with ErrConflict naming settled where the board
// was settled.
func (bs *boardState) checkUnsettled() error {
	if bs.disputes.settled {
		return errorf(ErrConflict, "settled: the board was settled at %s; its standings cannot change", FormatTime(bs.disputes.settleAt))
	}
	return nil
}

// CheckAmendable fails with ErrNotFound where board does not exist and
// with ErrConflict naming settled where it was settled: the checks an
// amendment's caller makes before preparing it. O(1). Read lock.
func (s *State) CheckAmendable(board string) error {
	bs, err := s.board(board)
	if err != nil {
		return err
	}
	return bs.checkUnsettled()
}

// disputeTarget checks an amendment of ev's member on ev's board and
// returns the board and the member's handle.
func (s *State) disputeTarget(ev *Event) (*boardState, uint32, error) {
	bs, err := s.board(ev.Board)
	if err != nil {
		return nil, 0, err
	}
	if err := bs.checkUnsettled(); err != nil {
		return nil, 0, err
	}
	if err := CheckReason(ev.Reason); err != nil {
		return nil, 0, err
	}
	h, ok := s.ix.Resolve(ev.Member)
	if !ok {
		return nil, 0, errorf(ErrNotFound, "member: %q is not a member of the tenant", Clip(ev.Member))
	}
	return bs, h, nil
}

// applyDisqualify takes ev's member out of the board's standings.
func (s *State) applyDisqualify(seq uint64, ev *Event) error {
	bs, h, err := s.disputeTarget(ev)
	if err != nil {
		return err
	}
	if bs.disputes.disqualified(h) {
		return errorf(ErrConflict, "member: %q is already disqualified", Clip(ev.Member))
	}
	if bs.disputes.disq == nil {
		bs.disputes.disq = map[uint32]struct{}{}
	}
	bs.disputes.disq[h] = struct{}{}
	s.amend(bs, seq, ev, ActionDisqualify, h)
	return nil
}

// applyReinstate puts a disqualified member back into the standings.
func (s *State) applyReinstate(seq uint64, ev *Event) error {
	bs, h, err := s.disputeTarget(ev)
	if err != nil {
		return err
	}
	if !bs.disputes.disqualified(h) {
		return errorf(ErrConflict, "member: %q is not disqualified", Clip(ev.Member))
	}
	delete(bs.disputes.disq, h)
	s.amend(bs, seq, ev, ActionReinstate, h)
	return nil
}

// amend bumps the board's revision and records the action, naming the
// member by its canonical id (an alias resolves to it).
func (s *State) amend(bs *boardState, seq uint64, ev *Event, action string, h uint32) {
	bs.disputes.revision++
	name, _ := s.ix.Name(h)
	bs.disputes.record(AdminAction{Seq: seq, At: ev.At, Action: action, Member: name, Sub: ev.Sub,
		Reason: ev.Reason, Revision: bs.disputes.revision})
}

// applySettle declares the board's payout done: its standings never change
// again. Only final standings settle (FinalAfter past the end).
func (s *State) applySettle(seq uint64, ev *Event) error {
	bs, err := s.board(ev.Board)
	if err != nil {
		return err
	}
	if err := bs.checkUnsettled(); err != nil {
		return err
	}
	if err := CheckReason(ev.Reason); err != nil {
		return err
	}
	if bs.ends == 0 || ev.At < bs.ends+FinalAfter.Milliseconds() {
		return errorf(ErrConflict, "ends_at: only final standings settle, %s after the board's end (ends_at %q)", FinalAfter, bs.settings.EndsAt)
	}
	bs.disputes.settled, bs.disputes.settleAt = true, ev.At
	bs.disputes.record(AdminAction{Seq: seq, At: ev.At, Action: ActionSettle, Sub: ev.Sub, Reason: ev.Reason,
		Revision: bs.disputes.revision})
	return nil
}

// AdminActions returns up to limit of board's admin actions with a Seq
// after after, oldest first, and whether more follow. ErrNotFound for an
// unknown board. O(actions). Read lock.
func (s *State) AdminActions(board string, after uint64, limit int) ([]AdminAction, bool, error) {
	bs, err := s.board(board)
	if err != nil {
		return nil, false, err
	}
	var out []AdminAction
	for _, a := range bs.disputes.actions {
		if a.Seq <= after {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, a)
	}
	return out, false, nil
}

// amendedNotes returns the standings.amended notification of an accepted
// amendment ev at seq (none where err): the standings' first rows after it,
// with prizes, its member and "action: reason". Its ID names the stream
// sequence, so each amendment is published once. O(notifyRows).
func (s *State) amendedNotes(seq uint64, ev *Event, err error) []Notification {
	if err != nil {
		return nil
	}
	bs := s.boards[ev.Board]
	st, _ := s.Standings(ev.Board, ev.At, 0, notifyRows)
	n := Notification{ID: fmt.Sprintf("standings.amended:%s:%d", ev.Board, seq), Type: "standings.amended",
		Board: ev.Board, At: FormatTime(ev.At), Seq: st.Seq, Total: st.Total,
		Reason: fmt.Sprintf("%s: %s", string(ev.Kind), ev.Reason)}
	if acts := bs.disputes.actions; len(acts) > 0 {
		n.Member = acts[len(acts)-1].Member
	}
	for _, r := range st.Rows {
		n.Rows = append(n.Rows, NotifyRow{Rank: r.Rank, Member: r.Member, Score: r.Score, Subscore: r.Subscore,
			Name: r.Profile.Name, Prize: r.Prize})
	}
	return []Notification{n}
}

// diffDisputes adds how board name's amendments differ, for Diff.
func diffDisputes(name string, x, y *boardState, add func(string, ...any)) {
	dx, dy := &x.disputes, &y.disputes
	if dx.revision != dy.revision || len(dx.disq) != len(dy.disq) {
		add("board %s: revision %d (%d disqualified) in the replay, %d (%d disqualified) in the snapshot",
			name, dx.revision, len(dx.disq), dy.revision, len(dy.disq))
	}
	if len(dx.voided) != len(dy.voided) {
		add("board %s: %d voided submissions in the replay, %d in the snapshot", name, len(dx.voided), len(dy.voided))
	}
	if dx.settled != dy.settled {
		add("board %s: settled %t in the replay, %t in the snapshot", name, dx.settled, dy.settled)
	}
}

// mergeDisqualified carries a disqualification of member from over to
// into, whose entry absorbs from's on a live board: linking a
// disqualified account to another must not bring its entry back. (An
// ended board merges nothing, so its disqualifications stay as they are.)
func (d *disputes) mergeDisqualified(into, from uint32) {
	if d.disqualified(from) {
		delete(d.disq, from)
		d.disq[into] = struct{}{}
	}
}
