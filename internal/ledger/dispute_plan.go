package ledger

import (
	"slices"

	"github.com/rankwire/rankwire/board"
)

// VoidPlanner computes an EvVoid from a tenant's log: it replays the log
// (every event from the first up to the replica's sequence, in order)
// into a state of its own, twice: the first replay finds the applied
// submission whose result carried the seq, and its member; the second
// records that member's submissions to the board, window by window,
// dropping those a removal, a reset or an earlier void took away. The
// member's entry in each window is then the board's policy applied to the
// submissions that remain, in order (a fresh board.Board fed them: the same
// code that ranked them). The planner holds one extra copy of the tenant's
// state and, of the submissions, only the member's on that board; cost
// O(events) per pass. It is pure: the hub feeds it events. Not safe for
// concurrent use.
//
// The first pass cannot be a read of the one event: the seq a void names
// is the one its result carried, the primary window's (Result.Seq), not
// the stream's, and nothing maps one to the other short of a replay; and
// the pass also checks that no other window's submission carried the same
// seq. A plan gone stale continues instead (Plan): the events after the
// ones fed are fed to the second pass, not both passes again.
type VoidPlanner struct {
	j    voidJournal
	st   *State
	pass int
	err  error
}

// voidJournal records, for one board, what a VoidPlanner's replay needs:
// in the first pass the applied submissions whose result carried seq, in
// the second one member's submissions. Replica goroutine of the planner's
// state only.
type voidJournal struct {
	board     string
	seq       uint64
	recording bool                     // second pass: record member's submissions
	member    uint32                   // the member recorded
	window    int64                    // the voided submission's primary window start
	hits      []voidHit                // first pass
	items     map[windowKey][]voidItem // second pass, in order applied
}

// voidHit is an applied submission whose result carried the seq sought.
type voidHit struct {
	member uint32
	window int64 // its primary window's start
}

// voidItem is one submission of the recorded member to one window.
type voidItem struct {
	sub     board.Submission
	rseq    uint64 // the seq its result carried
	window  int64  // its primary window's start
	applied bool   // its result said applied
}

// NewVoidPlanner returns a planner of the void of the submission to board
// whose result carried seq. Call Next, then feed every event of the log
// to Apply, until Next says no more; then Plan.
func NewVoidPlanner(boardName string, seq uint64) *VoidPlanner {
	return &VoidPlanner{j: voidJournal{board: boardName, seq: seq}}
}

// Next starts the next replay of the log from its first event, reporting
// whether one is needed (two in all, fewer where the first finds no such
// submission).
func (p *VoidPlanner) Next() bool {
	switch {
	case p.err != nil || p.pass > 1:
		return false
	case p.pass == 1:
		if p.err = p.found(); p.err != nil {
			return false
		}
		// The second pass records the hits again, so that Plan can check
		// them on a longer log.
		p.j.recording, p.j.items, p.j.hits = true, map[windowKey][]voidItem{}, nil
	}
	p.pass++
	p.st = New()
	p.st.journal = &p.j
	return true
}

// Apply applies the log's event at seq to the planner's replay.
func (p *VoidPlanner) Apply(seq uint64, ev *Event) {
	if p.st == nil {
		return
	}
	out := p.st.Apply(seq, ev)
	if out.Err == nil && ev.Board == p.j.board {
		p.j.after(p.st, ev)
	}
}

// found checks the first pass (hit) and makes its submission the one the
// second pass follows.
func (p *VoidPlanner) found() error {
	hit, err := p.hit()
	if err == nil {
		p.j.member, p.j.window = hit.member, hit.window
	}
	return err
}

// hit returns the submission that the state reached carries the seq:
// exactly one submission in a window the board still keeps carried it,
// and it was not voided.
func (p *VoidPlanner) hit() (voidHit, error) {
	j := &p.j
	bs, err := p.st.board(j.board)
	if err != nil {
		return voidHit{}, err
	}
	pk := bs.settings.primaryKind()
	hits := slices.DeleteFunc(slices.Clone(j.hits), func(h voidHit) bool { return bs.windows[windowKey{pk, h.window}] == nil })
	if len(hits) == 0 {
		return voidHit{}, errorf(ErrNotFound, "seq: %d is not the seq of a submission ranked on board %q", j.seq, j.board)
	}
	if len(hits) > 1 {
		return voidHit{}, errorf(ErrConflict, "seq: %d was carried by submissions in %d windows of board %q; it names none of them alone", j.seq, len(hits), j.board)
	}
	if _, done := bs.disputes.voided[voidKey{hits[0].window, j.seq}]; done {
		return voidHit{}, errorf(ErrConflict, "seq: %d was already voided", j.seq)
	}
	return hits[0], nil
}

// item records a submission of member h to board name, applied to the
// windows ws with result res (submitHandle calls it).
func (j *voidJournal) item(name string, ws []*window, primary int, h uint32, sub board.Submission, res Result) {
	if name != j.board || ws[primary] == nil {
		return
	}
	pwin := ws[primary].key.start
	if res.Applied && res.Seq == j.seq {
		j.hits = append(j.hits, voidHit{member: h, window: pwin})
	}
	if !j.recording || h != j.member {
		return
	}
	for _, w := range ws {
		if w != nil {
			j.items[w.key] = append(j.items[w.key], voidItem{sub: sub, rseq: res.Seq, window: pwin, applied: res.Applied})
		}
	}
}

// after follows an event on the journal's board that st applied: a
// deletion forgets everything, and in the second pass a removal of the
// member, a reset (the all window) and a void take submissions away.
func (j *voidJournal) after(st *State, ev *Event) {
	switch ev.Kind {
	case EvDelete:
		j.hits = j.hits[:0]
		clear(j.items)
	case EvRemove:
		if h, ok := st.ix.Resolve(ev.Member); ok && j.recording && h == j.member {
			clear(j.items)
		}
	case EvReset:
		delete(j.items, windowKey{kindAll, 0})
	case EvVoid:
		for k, items := range j.items {
			j.items[k] = dropVoided(items, ev.Void)
		}
	}
}

// dropVoided returns items without the one v voided.
func dropVoided(items []voidItem, v *Void) []voidItem {
	out := items[:0]
	for _, it := range items {
		if !it.is(v.Seq, v.Window) {
			out = append(out, it)
		}
	}
	return out
}

// is reports whether it is the applied submission whose result carried
// seq in the primary window starting at window.
func (it voidItem) is(seq uint64, window int64) bool {
	return it.applied && it.rseq == seq && it.window == window
}

// Plan returns the void of the submission, with the member's entry in
// every window of the board that counted it, as found and without it.
// ErrNotFound where the board or the seq is unknown; ErrConflict, naming
// seq, where it was voided already, no longer counts (the member was
// removed or the window reset since), or the member's entry does not
// follow from its own submissions (a merge of members folded another's
// entry into it).
//
// A plan gone stale (its EvVoid refused with ErrVoidStale) continues:
// feed Apply the log's events after the last one fed, in order, and call
// Plan again. It answers as a new planner fed the whole longer log would,
// or with ErrVoidStale where the seq now names another submission than
// the one followed (its window dropped, another took the seq): then plan
// afresh.
func (p *VoidPlanner) Plan() (*Void, error) {
	if p.err != nil {
		return nil, p.err
	}
	j := &p.j
	if p.st == nil || !j.recording || p.pass < 2 {
		return nil, errorf(ErrInternal, "void planned without its replays")
	}
	hit, err := p.hit() // what found checked, on the log fed since
	if err != nil {
		return nil, err
	}
	if hit != (voidHit{member: j.member, window: j.window}) {
		return nil, errorf(ErrVoidStale, "seq: %d names another submission than when the void was prepared; try again", j.seq)
	}
	bs, err := p.st.board(j.board)
	if err != nil {
		return nil, err
	}
	v := &Void{Seq: j.seq, Window: j.window}
	v.Member, _ = p.st.ix.Name(j.member)
	for _, k := range bs.sortedWindows() {
		e, ok, err := j.entry(bs, k)
		if err != nil {
			return nil, err
		}
		if ok {
			v.Entries = append(v.Entries, e)
		}
	}
	if len(v.Entries) == 0 {
		return nil, errorf(ErrConflict, "seq: %d no longer counts on board %q (its member was removed or the window reset since)", j.seq, j.board)
	}
	return v, nil
}

// entry computes the member's entry in window k of bs without the voided
// submission; false where the window never counted it.
func (j *voidJournal) entry(bs *boardState, k windowKey) (VoidEntry, bool, error) {
	items := j.items[k]
	at := -1
	for i, it := range items {
		if it.is(j.seq, j.window) {
			at = i
		}
	}
	if at < 0 {
		return VoidEntry{}, false, nil
	}
	was := entryScore(bs.windows[k].b, j.member)
	if !sameEntry(bs.fold(items, -1), was) {
		return VoidEntry{}, false, errorf(ErrConflict, "seq: the member's entry in window %s does not follow from its own submissions (members were merged); disqualify instead", k.kind)
	}
	return VoidEntry{Kind: k.kind.String(), Start: k.start, Was: was, Now: bs.fold(items, at)}, true, nil
}

// fold returns the entry the board's policy makes of items in order,
// leaving out the one at skip (-1: none); nil where none is left.
func (bs *boardState) fold(items []voidItem, skip int) *EntryScore {
	b := bs.newBoard()
	var h uint32
	for i, it := range items {
		if i != skip {
			_, _ = b.Submit(it.sub) // an overflowing sum fails here as it failed live
		}
		h = it.sub.Member
	}
	return entryScore(b, h)
}
