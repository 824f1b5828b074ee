package subscriptions

import "slices"

// resume returns the diff that turns v's state at seq since into its state
// at v.seq, from the ring (and w's pending changes, for a view computed
// after the last Apply), or false where the ring no longer reaches since or
// since is ahead of v. The rows are those whose rank a change touched or
// that the old state lacked; gone are the old state's ranks the view lost.
// Per subscription, not shared: O(changes since + rows).
func (v *view) resume(since uint64, w Window) (*shared, bool) {
	return v.diffSince(since, w.Pending(), 0)
}

// maxCatchUp bounds the changes a catch-up diff is built from: past it, the
// shared snapshot costs the engine nothing more per watcher.
const maxCatchUp = 256

// catchUp returns the diff from since, the seq of the last message a
// watcher's writer took, to v's state: what replaces a pending message the
// client never got, so that a slow client receives a diff rather than a
// full snapshot. False where the ring no longer reaches since or more than
// maxCatchUp changes passed. The ring holds every change up to v.seq once
// the tick computed v, so no pending changes are needed.
//
// Watchers of one view that fell behind mostly fell behind to the same few
// seqs (the ticks they last took), so the diffs are shared: kept per since
// until v changes, at most maxCatchUps of them, refusals included.
func (v *view) catchUp(since uint64) (*shared, bool) {
	if v.seq > v.ws.ring.last {
		return nil, false
	}
	if v.catchAt != v.seq {
		clear(v.catches)
		v.catchAt = v.seq
	}
	if d, ok := v.catches[since]; ok {
		return d, d != nil
	}
	d, ok := v.diffSince(since, nil, maxCatchUp)
	if len(v.catches) < maxCatchUps {
		if v.catches == nil {
			v.catches = make(map[uint64]*shared)
		}
		v.catches[since] = d // nil where refused
	}
	return d, ok
}

// maxCatchUps bounds the catch-up diffs a view keeps for one seq.
const maxCatchUps = 64

// diffSince builds the diff from since to v's state from the ring and
// pending, or reports false; limit > 0 bounds the changes it reads.
func (v *view) diffSince(since uint64, pending []Change, limit int) (*shared, bool) {
	if since > v.seq {
		return nil, false
	}
	steps, ok := v.ws.ring.since(since, v.seq, pending)
	if !ok || (limit > 0 && len(steps) > limit) {
		return nil, false
	}
	old := v.ranksBefore(steps)
	touched := stepSpans(steps)
	var put []Row
	for _, r := range v.st.rows {
		if !slices.Contains(old, r.Rank) || inSpans(r.Rank, touched) {
			put = append(put, r)
		}
	}
	var gone []int
	for _, rank := range old {
		if !slices.ContainsFunc(v.st.rows, func(r Row) bool { return r.Rank == rank }) {
			gone = append(gone, rank)
		}
	}
	b := body{diff: true, seq: v.seq, prev: since, total: v.total, rows: put, gone: gone}
	return &shared{typ: "diff", body: appendBody(nil, b), seq: v.seq, prev: since}, true
}

// ranksBefore returns the ranks v held before steps, sorted.
func (v *view) ranksBefore(steps []step) []int {
	total := totalBefore(v.total, steps)
	var ranks []int
	switch v.spec.Kind {
	case Top:
		ranks = rangeOf(v.spec.Offset+1, v.spec.Offset+v.spec.Limit, total)
	case Rank:
		ranks = rangeOf(v.spec.Rank, v.spec.Rank, total)
	case Around:
		for _, h := range v.st.handles {
			if p := rankBefore(h, v.rankOf(h), steps); p > 0 {
				ranks = rangeOf(max(1, p-v.spec.Radius), p+v.spec.Radius, total)
			}
		}
	case Members:
		for _, h := range v.st.handles {
			if p := rankBefore(h, v.rankOf(h), steps); p > 0 && !slices.Contains(ranks, p) {
				ranks = append(ranks, p)
			}
		}
		slices.Sort(ranks)
	}
	return ranks
}

// rankOf returns member h's rank in v's rows, or 0.
func (v *view) rankOf(h uint32) int {
	for _, r := range v.st.rows {
		if r.handle == h {
			return r.Rank
		}
	}
	return 0
}

// rangeOf returns the ranks lo..min(hi, total).
func rangeOf(lo, hi, total int) []int {
	var out []int
	for r := lo; r <= min(hi, total); r++ {
		out = append(out, r)
	}
	return out
}

func stepSpans(steps []step) []span {
	var spans []span
	for _, st := range steps {
		c := Change{Total: int(st.total)}
		c.OldRank, c.NewRank = int(st.old), int(st.new)
		if s, ok := c.span(); ok {
			spans = append(spans, s)
		}
	}
	return mergeSpans(spans)
}

func inSpans(rank int, spans []span) bool {
	for _, s := range spans {
		if s.lo <= rank && rank <= s.hi {
			return true
		}
	}
	return false
}
