package subscriptions

import "slices"

// index files v under its spans, handles and unresolved ids.
func (ws *windowState) index(v *view) {
	ws.ranks.add(v, v.st.spans)
	for _, h := range v.st.handles {
		ws.handles.add(h, v)
	}
	for _, id := range v.st.waiting {
		ws.names.add(id, v)
	}
}

func (ws *windowState) unindex(v *view) {
	ws.ranks.remove(v, v.st.spans)
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

// dirty returns the views that changes may have touched: those whose rank
// spans meet a changed span (found through the rank index, after merging
// the spans), those watching a changed member, and those waiting for the
// id of a member that just arrived. Never a scan of every view.
func (ws *windowState) dirty(changes []Change, w Window) viewSet {
	set := viewSet{}
	spans := make([]span, 0, len(changes))
	for _, c := range changes {
		if s, ok := c.span(); ok {
			spans = append(spans, s)
		}
		for v := range ws.handles[c.Member] {
			set[v] = struct{}{}
		}
		if c.OldRank == 0 && c.NewRank > 0 && len(ws.names) > 0 {
			if name, ok := w.Name(c.Member); ok {
				for v := range ws.names[name] {
					set[v] = struct{}{}
				}
			}
		}
	}
	for _, s := range mergeSpans(spans) {
		ws.ranks.visit(s, func(v *view) { set[v] = struct{}{} })
	}
	return set
}
