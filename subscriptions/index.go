package subscriptions

import (
	"cmp"
	"slices"
)

// bucketBits sets the width of a rank bucket (128 ranks): a view's spans
// (at most 101 ranks for around, Limit ranks for top) touch one to three.
const bucketBits = 7

// viewSet is a set of views.
type viewSet map[*view]struct{}

// multiIndex maps keys (member handles, unresolved ids, rank buckets) to
// the views that must hear of them.
type multiIndex[K comparable] map[K]keyViews

// keyViews is the views filed under one key. Most member keys are heard by
// one view (a player's own around or friends view), so the first view is
// held inline and a set is made only for a second: a set of one cost ~130
// bytes per key, and a friends view files ten keys. Invariants: one is nil
// only when more is empty, and more is nil when empty (a key back to one
// view does not keep the set it once needed).
type keyViews struct {
	one  *view
	more viewSet // the views beyond one; nil until a second
}

// each calls fn for every view under the key, once each. fn must not add
// to or remove from the index: a removal of one promotes a view out of
// more, which the iteration then misses.
func (kv keyViews) each(fn func(*view)) {
	if kv.one == nil {
		return
	}
	fn(kv.one)
	for v := range kv.more {
		fn(v)
	}
}

func (m multiIndex[K]) add(k K, v *view) {
	kv := m[k]
	switch {
	case kv.one == nil:
		kv.one = v
	case kv.one == v:
		return
	default:
		if kv.more == nil {
			kv.more = viewSet{}
		}
		kv.more[v] = struct{}{}
	}
	m[k] = kv
}

func (m multiIndex[K]) remove(k K, v *view) {
	kv, ok := m[k]
	if !ok {
		return
	}
	if kv.one == v {
		kv.one = nil
		for w := range kv.more { // promote any one of the rest
			kv.one = w
			delete(kv.more, w)
			break
		}
	} else {
		delete(kv.more, v)
	}
	if len(kv.more) == 0 {
		kv.more = nil // back to one view: the set's memory goes with it
	}
	if kv.one == nil {
		delete(m, k)
		return
	}
	m[k] = kv
}

// rankIndex finds the views whose rank spans meet a changed span without
// scanning every view: views are filed under each 128-rank bucket their
// spans touch. Not safe for concurrent use: its board-window's lock guards it.
type rankIndex multiIndex[int]

func (ix rankIndex) add(v *view, spans []span) {
	for _, s := range spans {
		for b := s.lo >> bucketBits; b <= s.hi>>bucketBits; b++ {
			multiIndex[int](ix).add(b, v)
		}
	}
}

func (ix rankIndex) remove(v *view, spans []span) {
	for _, s := range spans {
		for b := s.lo >> bucketBits; b <= s.hi>>bucketBits; b++ {
			multiIndex[int](ix).remove(b, v)
		}
	}
}

// visit calls fn for every view with a span meeting s, possibly more than
// once. O(min(buckets s covers, buckets in use) + views met): a change
// that shifts a million ranks visits only the buckets that hold views.
func (ix rankIndex) visit(s span, fn func(*view)) {
	lo, hi := s.lo>>bucketBits, s.hi>>bucketBits
	if hi-lo+1 > len(ix) {
		for b, set := range ix {
			if lo <= b && b <= hi {
				visitSet(set, s, fn)
			}
		}
		return
	}
	for b := lo; b <= hi; b++ {
		visitSet(ix[b], s, fn)
	}
}

func visitSet(set keyViews, s span, fn func(*view)) {
	set.each(func(v *view) {
		for _, vs := range v.st.spans {
			if vs.meets(s) {
				fn(v)
				break
			}
		}
	})
}

// mergeSpans sorts spans and joins those that overlap or touch, in place.
func mergeSpans(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	sortSpans(spans)
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.lo <= last.hi+1 {
			last.hi = max(last.hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

func sortSpans(spans []span) {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
}
