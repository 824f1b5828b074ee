package hub

import (
	"errors"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// apply applies the event at stream sequence seq to s and returns what the
// publishing call (or, for evGroup, each of its calls) reports.
// Deterministic: it reads only s, seq and ev (never the clock), and an error
// leaves s as the event found it, except that s.seq advances: a rejected
// event is still consumed.
func (s *state) apply(seq uint64, ev *event) outcome {
	s.seq = seq
	out := outcome{seq: seq}
	switch ev.Kind {
	case evSettings:
		out.err = s.applySettings(ev)
	case evSubmit:
		out.results, out.err = s.applySubmit(seq, ev.At, ev.KeepIDs, ev.Board, ev.Items, ev.digestsOf(0))
	case evGroup:
		out.groups = s.applyGroups(seq, ev)
	case evLink:
		out.err = s.applyLink(seq, ev)
	case evRemove:
		out.err = s.applyRemove(ev)
	case evReset:
		out.err = s.applyReset(ev)
	case evDelete:
		out.err = s.applyDelete(ev)
	case evApprove:
		var r Result
		r, out.err = s.applyApprove(seq, ev)
		out.results = []Result{r}
	case evReject:
		out.err = s.applyReject(ev)
	case evProfile:
		out.err = s.applyProfile(seq, ev)
	default:
		out.err = errorf(ErrInternal, "unknown event kind %q", ev.Kind)
	}
	return out
}

// applyGroups applies each group of a group-committed event in order, as
// if each were its own evSubmit at the same time and sequence: a group
// whose board is missing fails alone.
func (s *state) applyGroups(seq uint64, ev *event) []groupOutcome {
	if lanes := laneBoards(ev); parallelApply && len(lanes) > 1 {
		return s.applyLanes(seq, ev, lanes)
	}
	out := make([]groupOutcome, len(ev.Groups))
	for i, g := range ev.Groups {
		out[i].results, out[i].err = s.applySubmit(seq, ev.At, ev.KeepIDs, g.Board, g.Items, ev.digestsOf(i))
	}
	return out
}

func (s *state) board(name string) (*boardState, error) {
	if bs := s.boards[name]; bs != nil {
		return bs, nil
	}
	return nil, errorf(ErrNotFound, "board %q", name)
}

func (s *state) applySettings(ev *event) error {
	if ev.Settings == nil {
		return errorf(ErrInternal, "settings missing")
	}
	set, err := ev.Settings.normalize()
	if err != nil {
		return err
	}
	if err := s.checkBoardLimit(ev.Board, ev.MaxBoards); err != nil {
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
	return bs.update(set)
}

// checkBoardLimit fails with ErrLimit where creating board would take the
// tenant past maxBoards boards (zero: no limit). An existing board passes.
// O(1).
func (s *state) checkBoardLimit(board string, maxBoards int) error {
	if maxBoards <= 0 || s.boards[board] != nil || len(s.boards) < maxBoards {
		return nil
	}
	return errorf(ErrLimit, "boards: the tenant has %d boards, its limit", len(s.boards))
}

// update changes a board's settings. The ordering may change only while
// every window is empty; the empty windows are rebuilt with it and keep
// their seq.
func (bs *boardState) update(set Settings) error {
	if !sameOrdering(bs.settings, set) {
		if bs.hasEntries() {
			field, from, to := orderingChange(bs.settings, set)
			return errorf(ErrConflict, "%s: %q cannot become %q while the board has entries (reset it first)", field, from, to)
		}
		cfg, _ := set.boardConfig()
		cfg.CompareMembers = bs.cfg.CompareMembers
		bs.cfg = cfg
		for _, w := range bs.windows {
			w.b = bs.newBoard()
		}
	}
	bs.settings = set
	bs.starts, bs.ends = set.times()
	bs.dropUnkept()
	for k := range kindNames {
		bs.prune(kind(k))
	}
	return nil
}

// applySubmit applies items to board name at time at, after forgetting the
// board's idempotency ids accepted more than keepIDs ms before at (0: none;
// seen.go). digests are the items' id digests where computed ahead
// (event.prepare), else nil. Every applySlice items it calls s.yield (see
// state), so readers may see a prefix of the batch.
func (s *state) applySubmit(seq uint64, at, keepIDs int64, name string, items []Item, digests []idDigest) ([]Result, error) {
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
		ws = append(ws, bs.open(keyAt(k, ms)))
	}
	return ws, primary
}

// submitItem applies one item, accepted at at, to every window of board
// bs, or quarantines it where it breaks the board's rules. An item the
// index or board rejects (checked at ingest, so only a sum overflow in
// practice) is not applied; its result shows the entry as it stands.
func (s *state) submitItem(bs *boardState, name string, ws []*window, primary int, seq uint64, at int64, it Item) Result {
	h, ok := s.intern(it.Member)
	if !ok {
		return Result{Member: it.Member}
	}
	return s.submitJudged(bs, name, ws, primary, seq, at, it, h)
}

// submitJudged is submitItem with the member's handle h. It writes only
// bs's state and reads the identity index, so lanes may run it at once.
func (s *state) submitJudged(bs *boardState, name string, ws []*window, primary int, seq uint64, at int64, it Item, h uint32) Result {
	if why := bs.judge(ws[primary], at, it, h); why != ReasonNone {
		return s.holdItem(bs, name, ws[primary], at, it, h, why)
	}
	return s.submitHandle(bs, name, ws, primary, seq, at, it, h)
}

// intern returns member's handle, interning it where new, or false where
// the index refuses it or the handle is past maxMembers (checkMemberRoom
// refuses such a submission at ingest; apply keeps it unranked, on every
// node alike).
func (s *state) intern(member string) (uint32, bool) {
	h, err := s.ix.Intern(member)
	return h, err == nil && h <= maxMembers
}

// submitHandle applies item it of member h to every window. It reads the
// identity index but never writes it, so lanes of different boards may
// run it at once (apply_lanes.go).
//
// An applied change of the primary window is a point of the member's rank
// history (history.go).
func (s *state) submitHandle(bs *boardState, name string, ws []*window, primary int, seq uint64, at int64, it Item, h uint32) Result {
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
	return res
}

// result reports member h's standing in w.
func (w *window) result(h uint32, applied bool) Result {
	row, _ := w.b.Get(h)
	return Result{Score: row.Score, Subscore: row.Subscore, Rank: row.Rank, Applied: applied, Seq: w.seq}
}

// applyLink links aliases and folds every merge into every board-window of
// the tenant, at this event's sequence.
func (s *state) applyLink(seq uint64, ev *event) error {
	if ev.NoMerge {
		if err := s.checkNoMerge(ev.Member, ev.Aliases); err != nil {
			return err
		}
	}
	lr, err := s.ix.Link(ev.Member, ev.Aliases)
	if err != nil {
		return linkError(err)
	}
	for _, m := range lr.Merges {
		s.mergeProfile(m.Into, m.From)
		for name, bs := range s.boards {
			if bs.ended(ev.At) {
				continue // final standings never change: both entries stay as they were
			}
			bs.merge(m, seq, s.feed, name)
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
func (s *state) checkNoMerge(member string, aliases []string) error {
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

func (s *state) applyRemove(ev *event) error {
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
func (s *state) applyReset(ev *event) error {
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
		s.feed.reset(ev.Board, w.key)
	}
	return nil
}

func (s *state) applyDelete(ev *event) error {
	bs, err := s.board(ev.Board)
	if err != nil {
		return err
	}
	s.feed.reset(ev.Board, bs.sortedWindows()...)
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
