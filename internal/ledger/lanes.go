package ledger

// Parallel apply. A group-committed event often carries groups for
// several boards of the tenant (clients submitting to different
// tournaments at once). Boards share nothing but the identity index, which
// hands out member handles in stream order, and the feed log, which has
// its own lock. So applyLanes applies such an event in two phases, with
// exactly the Outcome of applying its groups one after another (applyGroups'
// sequential path), on every node:
//
//  1. On the replica goroutine, in event order: each group's board is
//     looked up (a missing one fails that group), the board's expired
//     idempotency ids are forgotten, and every item that is not a repeat
//     of an id (kept on its board or earlier in the event for that board)
//     has its member interned. The handles come out as the sequential
//     path would assign them.
//  2. One lane per board applies that board's groups in event order with
//     the handles of phase 1; a lane only writes its own board's state and
//     reads the identity index, so the lanes of a round may run at once:
//     the hub runs them on up to GOMAXPROCS goroutines (SetLanes; this
//     package starts none). Lanes advance applySlice items per round, and
//     the replica yields its write lock between rounds, so a read still
//     waits for one slice, not a whole event.
//
// Whether a repeat is a repeat is decided the same way in both phases:
// phase 2 sees the board's kept ids plus the ones its lane put earlier in
// this event, which is the set phase 1 checked.

// laneBoards returns the distinct boards of ev's groups in order of first
// appearance.
func laneBoards(ev *Event) []string {
	var boards []string
	for _, g := range ev.Groups {
		seen := false
		for _, b := range boards {
			if b == g.Board {
				seen = true
				break
			}
		}
		if !seen {
			boards = append(boards, g.Board)
		}
	}
	return boards
}

// lane is one board's share of an event: its groups in event order and
// how far phase 2 got.
type lane struct {
	bs     *boardState
	name   string
	groups []int // indexes into the event's groups
	gi, ii int   // next group (index into groups) and item

	ws      []*window // the current group's windows
	primary int
}

// applyLanes applies ev's groups as the file comment says.
func (s *State) applyLanes(seq uint64, ev *Event, boards []string) []GroupOutcome {
	out := make([]GroupOutcome, len(ev.Groups))
	handles := make([][]uint32, len(ev.Groups))
	lanes := make([]*lane, 0, len(boards))
	byName := make(map[string]*lane, len(boards))
	fresh := make(map[string]map[idDigest]struct{}, len(boards)) // ids first put in this event, per board
	for gi, g := range ev.Groups {
		bs, err := s.board(g.Board)
		if err == nil {
			err = bs.checkOpen(ev.At)
		}
		if err != nil {
			out[gi].Err = err
			continue
		}
		l := byName[g.Board]
		if l == nil {
			l = &lane{bs: bs, name: g.Board}
			byName[g.Board] = l
			lanes = append(lanes, l)
			fresh[g.Board] = map[idDigest]struct{}{}
		}
		l.groups = append(l.groups, gi)
		if ev.KeepIDs > 0 {
			bs.seen.expire(ev.At - ev.KeepIDs)
		}
		out[gi].Results = make([]Result, len(g.Items))
		handles[gi] = s.internGroup(bs, fresh[g.Board], g.Items, ev.digestsOf(gi))
	}
	s.runLanes(lanes, func(l *lane, gi, i int) {
		g := ev.Groups[gi]
		out[gi].Results[i] = s.laneItem(l, seq, ev.At, g.Items[i], digestAt(ev, gi, i), handles[gi][i])
	}, ev)
	return out
}

// internGroup interns, in order, the members of items that are not
// repeats (phase 1), and returns their handles: 0 for a repeat or a
// member the index refused.
func (s *State) internGroup(bs *boardState, fresh map[idDigest]struct{}, items []Item, digests []idDigest) []uint32 {
	hs := make([]uint32, len(items))
	for i, it := range items {
		if it.ID != "" {
			d := digestOr(digests, i, it.ID)
			if _, kept := bs.seen.m[d]; kept {
				continue
			}
			if _, dup := fresh[d]; dup {
				continue
			}
			fresh[d] = struct{}{}
		}
		if h, ok := s.intern(it.Member); ok {
			hs[i] = h
		}
	}
	return hs
}

// laneItem applies one item of a lane (phase 2) as applySubmit's loop
// would, with the handle phase 1 interned.
func (s *State) laneItem(l *lane, seq uint64, at int64, it Item, d idDigest, h uint32) Result {
	if it.ID != "" {
		if orig, ok := l.bs.seen.get(d); ok {
			orig.Duplicate = true
			return orig
		}
	}
	res := Result{Member: it.Member}
	if h != 0 {
		res = s.submitJudged(l.bs, l.name, l.ws, l.primary, seq, at, it, h)
	}
	if it.ID != "" {
		l.bs.seen.put(d, at, res)
	}
	return res
}

// runLanes runs phase 2: rounds in which every lane applies up to
// applySlice items (f per item). The lanes of a round run through s.lanes,
// which may run them at once; the replica yields between rounds.
func (s *State) runLanes(lanes []*lane, f func(l *lane, gi, i int), ev *Event) {
	for {
		var active []*lane
		for _, l := range lanes {
			if !l.done() {
				active = append(active, l)
			}
		}
		if len(active) == 0 {
			return
		}
		s.lanes(len(active), func(j int) { active[j].round(ev, f) })
		if s.yield != nil {
			s.yield()
		}
	}
}

func (l *lane) done() bool { return l.gi >= len(l.groups) }

// round applies up to applySlice items of l, opening each group's windows
// as it starts the group.
func (l *lane) round(ev *Event, f func(l *lane, gi, i int)) {
	for n := 0; n < applySlice && !l.done(); n++ {
		gi := l.groups[l.gi]
		if l.ii == 0 {
			l.ws, l.primary = l.bs.windowsAt(ev.At)
		}
		if l.ii < len(ev.Groups[gi].Items) {
			f(l, gi, l.ii)
			l.ii++
		}
		if l.ii >= len(ev.Groups[gi].Items) {
			l.gi, l.ii = l.gi+1, 0
		}
	}
}

// digestOr returns the precomputed digest of item i, or computes it.
func digestOr(digests []idDigest, i int, id string) idDigest {
	if digests != nil {
		return digests[i]
	}
	return digestID(id)
}

// digestAt returns the digest of item i of group gi of ev ("" id: zero).
func digestAt(ev *Event, gi, i int) idDigest {
	it := ev.Groups[gi].Items[i]
	if it.ID == "" {
		return idDigest{}
	}
	return digestOr(ev.digestsOf(gi), i, it.ID)
}
