package ledger

import (
	"math"
	"slices"
)

// Anti-cheat rules. A board's Rules quarantine a suspicious submission
// instead of ranking it: the item is held on the board, with the rule it
// broke, until an admin approves it (it is then ranked as a new submission
// at the approval's time and sequence) or rejects it (it is dropped).
// Whether an item breaks a rule is decided in apply, from the board's state
// and the event's acceptance time only, so every node and every replay
// holds the same items under the same ids; approvals and rejections are
// events too. The per-minute counters and the held items are part of the
// state, and so of snapshots.

// Rules are a board's anti-cheat limits; a nil field does not check.
type Rules struct {
	MinScore *float64 `json:"min_score,omitempty"` // a score below it is held
	MaxScore *float64 `json:"max_score,omitempty"` // a score above it is held
	// MaxStep holds a submission that would improve the member's entry in
	// the board's primary window by more than it, in the board's order
	// (for a sum board: a single score past it). A member's first entry
	// has no step: MaxScore bounds it.
	MaxStep *float64 `json:"max_step,omitempty"`
	// MaxPerMinute holds a member's submissions to the board past this many
	// in one minute of acceptance time (UTC minutes; every submission
	// counts, held ones too). 0: no limit.
	MaxPerMinute int `json:"max_per_minute,omitempty"`
}

// Limits of the rules and the quarantine.
const (
	MaxPerMinuteLimit = 1_000_000 // the largest max_per_minute
	MaxHeld           = 100_000   // items held per board; past it, items are refused with reason quarantine_full
	MaxHeldPage       = 1000      // items of one quarantine read
)

// Reason is the rule a held item broke.
type Reason uint8

// The reasons, in the order the rules are checked.
const (
	ReasonNone Reason = iota
	ReasonMinScore
	ReasonMaxScore
	ReasonMaxStep
	ReasonMaxPerMinute
	// ReasonFull: the item broke a rule while the board already held
	// MaxHeld items; it is neither ranked nor held.
	ReasonFull
)

var reasonNames = [...]string{"", "min_score", "max_score", "max_step", "max_per_minute", "quarantine_full"}

// Reasons lists every reason an item may be held for, for metrics.
var Reasons = []Reason{ReasonMinScore, ReasonMaxScore, ReasonMaxStep, ReasonMaxPerMinute, ReasonFull}

// String returns the rule's name as the protocol writes it.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}

// normalize checks the rules and returns nil for rules that check nothing.
// The error names the field.
func (r *Rules) normalize() (*Rules, error) {
	if r == nil {
		return nil, nil
	}
	out := *r
	for _, f := range []struct {
		name string
		v    *float64
	}{{"rules.min_score", out.MinScore}, {"rules.max_score", out.MaxScore}, {"rules.max_step", out.MaxStep}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return nil, errorf(ErrBadRequest, "%s: not a finite number", f.name)
		}
	}
	switch {
	case out.MinScore != nil && out.MaxScore != nil && *out.MinScore > *out.MaxScore:
		return nil, errorf(ErrBadRequest, "rules.min_score: %v is above rules.max_score %v", *out.MinScore, *out.MaxScore)
	case out.MaxStep != nil && *out.MaxStep <= 0:
		return nil, errorf(ErrBadRequest, "rules.max_step: %v is not above 0", *out.MaxStep)
	case out.MaxPerMinute < 0 || out.MaxPerMinute > MaxPerMinuteLimit:
		return nil, errorf(ErrBadRequest, "rules.max_per_minute: %d is not in 0..%d", out.MaxPerMinute, MaxPerMinuteLimit)
	}
	if out.MinScore == nil && out.MaxScore == nil && out.MaxStep == nil && out.MaxPerMinute == 0 {
		return nil, nil
	}
	// Fresh copies: settings are shared by value, and must not alias a
	// caller's floats.
	out.MinScore, out.MaxScore, out.MaxStep = cloneF(out.MinScore), cloneF(out.MaxScore), cloneF(out.MaxStep)
	return &out, nil
}

func cloneF(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Held is one quarantined submission.
type Held struct {
	QID      uint64 // the board's id for it, increasing in stream order
	Member   string // as submitted (an id or alias)
	Score    float64
	Subscore float64
	Reason   Reason
	At       int64  // acceptance time, unix ms
	handle   uint32 // the member's handle when held: its rows show the review marker
}

// quarantine is a board's held items and per-minute counters. Replica
// goroutine (or the board's lane) only.
type quarantine struct {
	last   uint64 // the last QID handed out
	held   []Held // sorted by QID
	minute int64  // the minute (unix ms / 60,000) counts are for
	counts map[uint32]uint32
	review map[uint32]uint32 // held items by member handle, where any
	cap    int               // the most items held: set by each submitting event (capHeld); 0 means MaxHeld
}

// underReview reports whether member h has a held item. O(1).
func (q *quarantine) underReview(h uint32) bool { return q.review[h] > 0 }

// mark counts a held item of member h (delta 1) or its decision (-1),
// and reports whether the member's review marker changed.
func (q *quarantine) mark(h uint32, delta int) bool {
	if q.review == nil {
		q.review = map[uint32]uint32{}
	}
	n := int(q.review[h]) + delta
	if n <= 0 {
		delete(q.review, h)
		return n == 0
	}
	q.review[h] = uint32(n)
	return n == 1 && delta > 0
}

// count adds one submission of member h at acceptance time at and returns
// the member's submissions in that minute so far. A time before the
// current minute (another node's clock a little behind) counts in the
// current one.
func (q *quarantine) count(at int64, h uint32) uint32 {
	if m := at / 60_000; m > q.minute || q.counts == nil {
		q.minute = max(m, q.minute)
		q.counts = map[uint32]uint32{}
	}
	q.counts[h]++
	return q.counts[h]
}

// judge returns the rule the item it of member h, accepted at at, breaks
// on bs, or ReasonNone; primary is the board's primary window (nil where
// too old to keep). It counts the item for max_per_minute.
func (bs *boardState) judge(primary *window, at int64, it Item, h uint32) Reason {
	r := bs.settings.Rules
	if r == nil {
		return ReasonNone
	}
	tooMany := r.MaxPerMinute > 0 && bs.quarantine.count(at, h) > uint32(r.MaxPerMinute)
	switch {
	case r.MinScore != nil && it.Score < *r.MinScore:
		return ReasonMinScore
	case r.MaxScore != nil && it.Score > *r.MaxScore:
		return ReasonMaxScore
	case r.MaxStep != nil && bs.step(primary, it, h) > *r.MaxStep:
		return ReasonMaxStep
	case tooMany:
		return ReasonMaxPerMinute
	}
	return ReasonNone
}

// step returns how far the item would improve member h's entry in the
// board's order: the score's difference to the entry's (0 for a first
// entry), or for a sum board the score itself.
func (bs *boardState) step(primary *window, it Item, h uint32) float64 {
	sign := 1.0
	if bs.settings.Order == "asc" {
		sign = -1
	}
	if bs.settings.Policy == "sum" {
		return sign * it.Score
	}
	if primary == nil {
		return 0
	}
	row, ok := primary.b.Get(h)
	if !ok {
		return 0
	}
	return sign * (it.Score - row.Score)
}

// hold keeps it as a held item for reason and returns its QID, or 0 where
// the board holds its cap (the event's limit, at most MaxHeld) already.
func (q *quarantine) hold(it Item, reason Reason, at int64, h uint32) uint64 {
	if len(q.held) >= heldCap(q.cap) {
		return 0
	}
	q.last++
	q.held = append(q.held, Held{QID: q.last, Member: it.Member, Score: it.Score, Subscore: it.Subscore, Reason: reason, At: at, handle: h})
	return q.last
}

// find returns the index of qid in q.held, or false.
func (q *quarantine) find(qid uint64) (int, bool) {
	return slices.BinarySearchFunc(q.held, qid, func(h Held, id uint64) int {
		switch {
		case h.QID < id:
			return -1
		case h.QID > id:
			return 1
		}
		return 0
	})
}

// take removes and returns the held item qid, or false.
func (q *quarantine) take(qid uint64) (Held, bool) {
	i, ok := q.find(qid)
	if !ok {
		return Held{}, false
	}
	h := q.held[i]
	q.held = slices.Delete(q.held, i, i+1)
	return h, true
}

// page returns up to limit held items with QIDs after after, and whether
// more follow.
func (q *quarantine) page(after uint64, limit int) ([]Held, bool) {
	i, found := q.find(after)
	if found {
		i++
	}
	end := min(len(q.held), i+limit)
	return slices.Clone(q.held[i:end]), end < len(q.held)
}

// holdItem quarantines item it of member h on board bs for reason and
// returns its result: the member's entry as it stands, not applied.
func (s *State) holdItem(bs *boardState, name string, primary *window, at int64, it Item, h uint32, reason Reason) Result {
	res := Result{Reason: reason}
	if primary != nil {
		res = primary.result(h, false)
		res.Reason = reason
	}
	if res.QID = bs.quarantine.hold(it, reason, at, h); res.QID == 0 {
		res.Reason = ReasonFull
	} else {
		bs.fresh = append(bs.fresh, bs.quarantine.held[len(bs.quarantine.held)-1]) // the event's Outcome
		if bs.quarantine.mark(h, 1) {
			s.touch(name, bs, h) // its rows now show the review marker
			if primary != nil {
				res.Seq = primary.seq
			}
		}
	}
	res.Member, _ = s.ix.Name(h)
	return res
}

// applyApprove ranks the held item ev.QID as a submission accepted at the
// approval's time and sequence, past the rules. ErrNotFound for an unknown
// QID; ErrConflict where the board is outside its time by then (the item
// stays held).
func (s *State) applyApprove(seq uint64, ev *Event) (Result, error) {
	bs, err := s.board(ev.Board)
	if err != nil {
		return Result{}, err
	}
	i, ok := bs.quarantine.find(ev.QID)
	if !ok {
		return Result{}, errorf(ErrNotFound, "qid %d on board %q", ev.QID, ev.Board)
	}
	if err := checkDecisionReason(ev.Reason); err != nil {
		return Result{}, err
	}
	if err := bs.checkOpen(ev.At); err != nil {
		return Result{}, err
	}
	held := bs.quarantine.held[i]
	h, ok := s.intern(held.Member)
	if !ok {
		return Result{}, errorf(ErrLimit, "member %q: the tenant holds too many member ids", held.Member)
	}
	s.release(ev.Board, bs, ev.QID)
	ws, primary := bs.windowsAt(ev.At)
	it := Item{Member: held.Member, Score: held.Score, Subscore: held.Subscore}
	res := s.submitHandle(bs, ev.Board, ws, primary, seq, ev.At, it, h)
	logDecision(bs, seq, ev, ActionApprove, held.Member)
	return res, nil
}

// applyReject drops the held item ev.QID. ErrNotFound for an unknown QID.
func (s *State) applyReject(seq uint64, ev *Event) error {
	bs, err := s.board(ev.Board)
	if err != nil {
		return err
	}
	i, ok := bs.quarantine.find(ev.QID)
	if !ok {
		return errorf(ErrNotFound, "qid %d on board %q", ev.QID, ev.Board)
	}
	if err := checkDecisionReason(ev.Reason); err != nil {
		return err
	}
	member := bs.quarantine.held[i].Member
	s.release(ev.Board, bs, ev.QID)
	logDecision(bs, seq, ev, ActionReject, member)
	return nil
}

// checkDecisionReason checks a decision's reason: optional, else as
// CheckReason says.
func checkDecisionReason(reason string) error {
	if reason == "" {
		return nil
	}
	return CheckReason(reason)
}

// logDecision records an accepted decision on a held item in the board's
// admin log, where the event asks for it (Event.Logged). A decision is
// not an amendment: the revision stays.
func logDecision(bs *boardState, seq uint64, ev *Event, action, member string) {
	if !ev.Logged {
		return
	}
	bs.disputes.record(AdminAction{Seq: seq, At: ev.At, Action: action, Member: member, Sub: ev.Sub,
		Reason: ev.Reason, Revision: bs.disputes.revision, QID: ev.QID})
}

// release takes the held item qid off board name's quarantine, clearing
// its member's review marker where it was the member's last; false where
// the board holds no such item.
func (s *State) release(name string, bs *boardState, qid uint64) bool {
	held, ok := bs.quarantine.take(qid)
	if ok && bs.quarantine.mark(held.handle, -1) {
		s.touch(name, bs, held.handle) // the review marker goes
	}
	return ok
}
