package ledger

import (
	"errors"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// Outcome is what applying one event decided: what the publishing call
// (or, for EvGroup, each of its calls) reports, and what the hub acts on
// besides (notifications). Apply has no other output than s and its
// Outcome.
type Outcome struct {
	Seq     uint64
	Results []Result
	Err     error
	Groups  []GroupOutcome // EvGroup: one per group, in order
	// Held lists the submissions the event quarantined, by board in order
	// of first appearance in the event, each board's by QID: the same
	// order whether its groups ran in lanes or one after another.
	Held []HeldNote
	// Notes are notifications the event decided (standings.amended:
	// dispute.go), without their Tenant, which the hub sets.
	Notes []Notification
	// Schedule reports that the event may have changed when the tenant's
	// notifications come due (a board's settings or its deletion): see
	// NextDue.
	Schedule bool
}

// GroupOutcome is what one group of an EvGroup event gave its call.
type GroupOutcome struct {
	Results []Result
	Err     error
}

// HeldNote is one submission an event quarantined on Board.
type HeldNote struct {
	Board string
	Held  Held
}

// Apply applies the event at stream sequence seq to s and returns its
// Outcome. Deterministic: it reads only s, seq and ev (never the clock),
// and an error leaves s as the event found it, except that s.seq
// advances: a rejected event is still consumed. Cost: O(items × windows ×
// log N) for a submission.
func (s *State) Apply(seq uint64, ev *Event) Outcome {
	s.seq = seq
	out := Outcome{Seq: seq}
	switch ev.Kind {
	case EvSettings:
		out.Err = s.applySettings(ev)
		out.Schedule = out.Err == nil
	case EvSubmit:
		s.capHeld(ev.MaxHeld, ev.Board)
		out.Results, out.Err = s.applySubmit(seq, ev.At, ev.KeepIDs, ev.Board, ev.Items, ev.digestsOf(0))
		out.Held = s.takeHeld(out.Held, ev.Board)
	case EvGroup:
		s.capHeld(ev.MaxHeld, laneBoards(ev)...)
		out.Groups = s.applyGroups(seq, ev)
		for _, b := range laneBoards(ev) {
			out.Held = s.takeHeld(out.Held, b)
		}
	case EvLink:
		out.Err = s.applyLink(seq, ev)
	case EvRemove:
		out.Err = s.applyRemove(ev)
	case EvReset:
		out.Err = s.applyReset(ev)
	case EvDelete:
		out.Err = s.applyDelete(ev)
		out.Schedule = out.Err == nil
	case EvApprove:
		var r Result
		r, out.Err = s.applyApprove(seq, ev)
		out.Results = []Result{r}
	case EvReject:
		out.Err = s.applyReject(seq, ev)
	case EvProfile:
		out.Err = s.applyProfile(seq, ev)
	case EvDisqualify:
		out.Err = s.applyDisqualify(seq, ev)
		out.Notes = s.amendedNotes(seq, ev, out.Err)
	case EvReinstate:
		out.Err = s.applyReinstate(seq, ev)
		out.Notes = s.amendedNotes(seq, ev, out.Err)
	case EvSettle:
		out.Err = s.applySettle(seq, ev)
		out.Notes = s.amendedNotes(seq, ev, out.Err)
	case EvVoid:
		out.Err = s.applyVoid(seq, ev)
		out.Notes = s.amendedNotes(seq, ev, out.Err)
	case EvErase:
		out.Err = s.applyErase(seq, ev)
	case EvSchedule:
		out.Err = s.applySchedule(ev)
	case EvUnschedule:
		out.Err = s.applyUnschedule(ev)
	case EvFire:
		out.Err = s.applyFire(ev)
		out.Schedule = out.Err == nil
	default:
		out.Err = errorf(ErrInternal, "unknown event kind %q", ev.Kind)
	}
	return out
}

// takeHeld appends to notes the items board quarantined during this
// event, and forgets them.
func (s *State) takeHeld(notes []HeldNote, board string) []HeldNote {
	bs := s.boards[board]
	if bs == nil {
		return notes
	}
	for _, h := range bs.fresh {
		notes = append(notes, HeldNote{Board: board, Held: h})
	}
	bs.fresh = bs.fresh[:0]
	return notes
}

// applyGroups applies each group of a group-committed event in order, as
// if each were its own EvSubmit at the same time and sequence: a group
// whose board is missing fails alone.
func (s *State) applyGroups(seq uint64, ev *Event) []GroupOutcome {
	if lanes := laneBoards(ev); s.lanes != nil && len(lanes) > 1 {
		return s.applyLanes(seq, ev, lanes)
	}
	out := make([]GroupOutcome, len(ev.Groups))
	for i, g := range ev.Groups {
		out[i].Results, out[i].Err = s.applySubmit(seq, ev.At, ev.KeepIDs, g.Board, g.Items, ev.digestsOf(i))
	}
	return out
}

func (s *State) board(name string) (*boardState, error) {
	if bs := s.boards[name]; bs != nil {
		return bs, nil
	}
	return nil, errorf(ErrNotFound, "board %q", name)
}

func (s *State) applySettings(ev *Event) error {
	if ev.Settings == nil {
		return errorf(ErrInternal, "settings missing")
	}
	set, err := ev.Settings.normalize()
	if err != nil {
		return err
	}
	if err := s.CheckBoardLimit(ev.Board, ev.MaxBoards); err != nil {
		return err
	}
	bs := s.boards[ev.Board]
	if bs == nil {
		s.boards[ev.Board] = s.newBoardState(set)
		return nil
	}
	if err := bs.checkSettingsChange(ev.At, set); err != nil {
		return err
	}
	dropped, err := bs.update(set)
	for _, w := range dropped {
		s.feed.reset(ev.Board, w)
	}
	return err
}

// CheckBoardLimit fails with ErrLimit where creating board would take the
// tenant past maxBoards boards (zero: no limit). An existing board passes.
// O(1).
func (s *State) CheckBoardLimit(board string, maxBoards int) error {
	if maxBoards <= 0 || s.boards[board] != nil || len(s.boards) < maxBoards {
		return nil
	}
	return errorf(ErrLimit, "boards: the tenant has %d boards, its limit", len(s.boards))
}

// update changes a board's settings. The ordering may change only while
// every window is empty; the empty windows are rebuilt with it and keep
// their seq. The calendar may change only while the day, week and month
// windows are empty; they are dropped, and returned for the feed's reset.
func (bs *boardState) update(set Settings) ([]*window, error) {
	if err := bs.checkCalendar(set); err != nil {
		return nil, err
	}
	if !sameOrdering(bs.settings, set) {
		if bs.hasEntries() {
			field, from, to := orderingChange(bs.settings, set)
			return nil, errorf(ErrConflict, "%s: %q cannot become %q while the board has entries (reset it first)", field, from, to)
		}
		cfg, _ := set.boardConfig()
		cfg.CompareMembers = bs.cfg.CompareMembers
		bs.cfg = cfg
		for _, w := range bs.windows {
			w.b = bs.newBoard()
		}
	}
	dropped := bs.recalendar(set)
	bs.settings = set
	bs.starts, bs.ends = set.times()
	bs.dropUnkept()
	for k := range kindNames {
		bs.prune(kind(k))
	}
	return dropped, nil
}

// applySubmit applies items to board name at time at, after forgetting the
// board's idempotency ids accepted more than keepIDs ms before at (0: none;
// seen.go). digests are the items' id digests where computed ahead
// (event.prepare), else nil. Every applySlice items it calls s.yield (see
// state), so readers may see a prefix of the batch.
func (s *State) applySubmit(seq uint64, at, keepIDs int64, name string, items []Item, digests []idDigest) ([]Result, error) {
	bs, err := s.board(name)
	if err != nil {
		return nil, err
	}
	if err := bs.checkOpen(at); err != nil {
		return nil, err
	}
	if keepIDs > 0 {
		bs.seen.expire(at - keepIDs)
	}
	ws, primary := bs.windowsAt(at)
	res := make([]Result, len(items))
	for i, it := range items {
		s.step()
		var d idDigest
		if it.ID != "" {
			if digests != nil {
				d = digests[i]
			} else {
				d = digestID(it.ID)
			}
			if orig, ok := bs.seen.get(d); ok {
				orig.Duplicate = true
				res[i] = orig
				continue
			}
		}
		res[i] = s.submitItem(bs, name, ws, primary, seq, at, it)
		if it.ID != "" {
			bs.seen.put(d, at, res[i])
		}
	}
	return res, nil
}

// windowsAt opens the windows an event at time ms writes to, in settings
// order, and names the primary one (nil entries: too old to keep).
func (bs *boardState) windowsAt(ms int64) (ws []*window, primary int) {
	pk := bs.settings.primaryKind()
	for i, name := range bs.settings.Windows {
		k, _ := parseKind(name)
		if k == pk {
			primary = i
		}
		ws = append(ws, bs.open(bs.cal.keyAt(k, ms)))
	}
	return ws, primary
}

// submitItem applies one item, accepted at at, to every window of board
// bs, or quarantines it where it breaks the board's rules. An item the
// index or board rejects (checked at ingest, so only a sum overflow in
// practice) is not applied; its result shows the entry as it stands.
func (s *State) submitItem(bs *boardState, name string, ws []*window, primary int, seq uint64, at int64, it Item) Result {
	h, ok := s.intern(it.Member)
	if !ok {
		return Result{Member: it.Member}
	}
	return s.submitJudged(bs, name, ws, primary, seq, at, it, h)
}

// submitJudged is submitItem with the member's handle h. It writes only
// bs's state and reads the identity index, so lanes may run it at once.
func (s *State) submitJudged(bs *boardState, name string, ws []*window, primary int, seq uint64, at int64, it Item, h uint32) Result {
	if why := bs.judge(ws[primary], at, it, h); why != ReasonNone {
		return s.holdItem(bs, name, ws[primary], at, it, h, why)
	}
	return s.submitHandle(bs, name, ws, primary, seq, at, it, h)
}

// intern returns member's handle, interning it where new, or false where
// the index refuses it or the handle is past maxMembers (checkMemberRoom
// (the hub) refuses such a submission at ingest; apply keeps it unranked, on every
// node alike).
func (s *State) intern(member string) (uint32, bool) {
	h, err := s.ix.Intern(member)
	return h, err == nil && h <= s.maxMembers
}

// submitHandle applies item it of member h to every window. It reads the
// identity index but never writes it, so lanes of different boards may
// run it at once (apply_lanes.go).
//
// An applied change of the primary window is a point of the member's rank
// history (history.go).
func (s *State) submitHandle(bs *boardState, name string, ws []*window, primary int, seq uint64, at int64, it Item, h uint32) Result {
	var res Result
	for i, w := range ws {
		if w == nil {
			continue
		}
		w.reserve()
		c, err := w.b.Submit(board.Submission{Member: h, Score: it.Score, Subscore: it.Subscore, Seq: seq})
		if err == nil && (c.Applied || c.Moved()) {
			w.seq++
			s.feed.note(name, w, c)
		}
		if i == primary && err == nil {
			// The change carries the member's entry and rank after it: a
			// second search (w.result) would cost as much as the update.
			res = Result{Score: c.New.Score, Subscore: c.New.Subscore, Rank: c.NewRank, Applied: c.Applied, Seq: w.seq}
			if c.Applied && c.NewRank > 0 {
				bs.history.add(point{at: at, score: c.New.Score, member: h, rank: uint32(c.NewRank),
					total: uint32(w.b.Len()), window: w.key.start})
			}
		} else if i == primary {
			res = w.result(h, false)
		}
	}
	res.Member, _ = s.ix.Name(h)
	if s.journal != nil {
		s.journal.item(name, ws, primary, h, board.Submission{Member: h, Score: it.Score, Subscore: it.Subscore, Seq: seq}, res)
	}
	return res
}

// result reports member h's standing in w.
func (w *window) result(h uint32, applied bool) Result {
	row, _ := w.b.Get(h)
	return Result{Score: row.Score, Subscore: row.Subscore, Rank: row.Rank, Applied: applied, Seq: w.seq}
}

// applyLink links aliases and folds every merge into every board-window of
// the tenant, at this event's sequence.
func (s *State) applyLink(seq uint64, ev *Event) error {
	if err := s.checkAliasLimit(ev.Member, ev.Aliases, ev.MaxAliases); err != nil {
		return err
	}
	if ev.NoMerge {
		if err := s.checkNoMerge(ev.Member, ev.Aliases); err != nil {
			return err
		}
	}
	if err := s.checkMemberReach(ev.Member, ev.Reach, "linking aliases"); err != nil {
		return err
	}
	lr, err := s.ix.Link(ev.Member, ev.Aliases)
	if err != nil {
		return linkError(err)
	}
	for _, m := range lr.Merges {
		s.freezeProfile(m.Into, ev.At) // ended boards keep both members' profiles at the end
		s.freezeProfile(m.From, ev.At)
		s.mergeProfile(m.Into, m.From)
		for name, bs := range s.boards {
			if bs.ended(ev.At) {
				continue // final standings never change: both entries stay as they were
			}
			bs.merge(m, seq, s.feed, name)
			bs.disputes.mergeDisqualified(m.Into, m.From) // dispute.go
		}
	}
	return nil
}

// checkNoMerge fails with ErrForbidden, naming the first such alias, where
// linking aliases to member would merge two members: an alias resolving to
// a member other than the one member resolves to (member may itself be an
// alias: it stands for its owner). Exact, not a guess: with no merge, the
// only change Link makes is adding new aliases to member's handle, which
// cannot turn a later alias of the list into a merge. O(len(aliases)).
func (s *State) checkNoMerge(member string, aliases []string) error {
	h, known := s.ix.Resolve(member)
	for i, a := range aliases {
		other, ok := s.ix.Resolve(a)
		if ok && (!known || other != h) {
			return errorf(ErrForbidden, "aliases[%d]: %q already names another member; merging members needs role admin and a token that reaches every board",
				i, a)
		}
	}
	return nil
}

// merge folds m.From into m.Into on every window. A sum that would overflow
// leaves that window unchanged (board.Merge guarantees it).
func (bs *boardState) merge(m identity.Merge, seq uint64, feed *feedLog, name string) {
	for _, w := range bs.windows {
		gone, kept, err := w.b.Merge(m.Into, m.From, seq)
		if err == nil && (gone.Moved() || kept.Moved() || kept.Applied) {
			w.seq++
			feed.note(name, w, gone, kept)
		}
	}
}

func (s *State) applyRemove(ev *Event) error {
	bs, err := s.board(ev.Board)
	if err != nil {
		return err
	}
	if err := bs.checkNotEnded(ev.At, "removing a member"); err != nil {
		return err
	}
	h, ok := s.ix.Resolve(ev.Member)
	removed := false
	for _, w := range bs.windows {
		if !ok {
			break
		}
		if c, gone := w.b.Remove(h); gone {
			w.seq++
			s.feed.note(ev.Board, w, c)
			removed = true
		}
	}
	if !removed {
		return errorf(ErrNotFound, "member %q on board %q", ev.Member, ev.Board)
	}
	return nil
}

// applyReset empties the all window; day, week and month windows stay.
func (s *State) applyReset(ev *Event) error {
	bs, err := s.board(ev.Board)
	if err != nil {
		return err
	}
	if err := bs.checkNotEnded(ev.At, "a reset"); err != nil {
		return err
	}
	if w := bs.windows[windowKey{kindAll, 0}]; w != nil && w.b.Len() > 0 {
		w.b = bs.newBoard()
		w.seq++
		s.feed.reset(ev.Board, w)
	}
	return nil
}

func (s *State) applyDelete(ev *Event) error {
	bs, err := s.board(ev.Board)
	if err != nil {
		return err
	}
	for _, k := range bs.sortedWindows() {
		s.feed.deleted(ev.Board, k, bs.windows[k].name)
	}
	all := windowKey{kindAll, 0}
	s.feed.deleted(ev.Board, all, bs.cal.name(all)) // a board with no window yet is watched all the same
	delete(s.boards, ev.Board)
	return nil
}

// linkError is the error of a Link the identity index refused: the only
// refusal validateLink cannot foresee is a full index.
func linkError(err error) error {
	if errors.Is(err, identity.ErrFull) {
		return &Error{Code: CodeBadRequest, Msg: "aliases: the tenant holds too many identifiers", Cause: err, class: ErrBadRequest}
	}
	return &Error{Code: CodeBadRequest, Msg: "member or aliases: not valid identifiers", Cause: err, class: ErrBadRequest}
}
