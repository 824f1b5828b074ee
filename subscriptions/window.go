package subscriptions

import "slices"

// spansOf returns the rank index v's spans are filed in: a members view
// shows members, not positions, so only a change that shifts ranks (a move
// or an insert above its members) touches it through its spans; a change
// of a score in place reaches it through its member's handle, if at all.
func (ws *windowState) spansOf(v *view) rankIndex {
	if v.spec.Kind == Members {
		return ws.shifts
	}
	return ws.ranks
}

// index files v under its spans, handles and unresolved ids.
func (ws *windowState) index(v *view) {
	ws.spansOf(v).add(v, v.st.spans)
	for _, h := range v.st.handles {
		ws.handles.add(h, v)
	}
	for _, id := range v.st.waiting {
		ws.names.add(id, v)
	}
}

func (ws *windowState) unindex(v *view) {
	ws.spansOf(v).remove(v, v.st.spans)
	for _, h := range v.st.handles {
		ws.handles.remove(h, v)
	}
	for _, id := range v.st.waiting {
		ws.names.remove(id, v)
	}
}

// reindex refiles v where its new state st moved its spans, handles or
// unresolved ids (an around view whose member moved). The caller sets v.st.
func (ws *windowState) reindex(v *view, st state) {
	if slices.Equal(v.st.spans, st.spans) && slices.Equal(v.st.handles, st.handles) && slices.Equal(v.st.waiting, st.waiting) {
		return
	}
	ws.unindex(v)
	old := v.st
	v.st = st
	ws.index(v)
	v.st = old
}

// dirtyScratch is a board-window's memory for Apply's dirty views, kept
// from one Apply to the next so that a tick allocates none of it: at a
// thousand submissions a second in small batches there are hundreds of
// ticks a second. Its board-window's lock guards it.
type dirtyScratch struct {
	set    viewSet
	spans  []span
	shifts []span
	views  []*view
}

// dirty appends to dst the views that changes may have touched, each
// once: those whose rank spans meet a changed span (found through the rank
// index, after merging the spans), those watching a changed member, and
// those waiting for the id of a member that just arrived. Never a scan of
// every view: a change of one rank visits the views filed in its 128-rank
// bucket.
func (ws *windowState) dirty(changes []Change, w Window, dst []*view) []*view {
	sc := &ws.scratch
	if sc.set == nil {
		sc.set = viewSet{}
	}
	set := sc.set
	add := func(v *view) { set[v] = struct{}{} }
	spans, shifts := sc.spans[:0], sc.shifts[:0]
	for _, c := range changes {
		if s, ok := c.span(); ok {
			spans = append(spans, s)
			if c.OldRank != c.NewRank {
				shifts = append(shifts, s)
			}
		}
		ws.handles[c.Member].each(add)
		if c.OldRank == 0 && c.NewRank > 0 && len(ws.names) > 0 {
			if name, ok := w.Name(c.Member); ok {
				ws.names[name].each(add)
			}
		}
	}
	for _, s := range mergeSpans(spans) {
		ws.ranks.visit(s, add)
	}
	for _, s := range mergeSpans(shifts) {
		ws.shifts.visit(s, add)
	}
	for v := range set {
		dst = append(dst, v)
	}
	clear(set)
	sc.spans, sc.shifts = spans[:0], shifts[:0]
	return dst
}
