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

// multiIndex maps keys (member handles, unresolved ids) to the views that
// must hear of them.
type multiIndex[K comparable] map[K]viewSet

func (m multiIndex[K]) add(k K, v *view) {
	if m[k] == nil {
		m[k] = viewSet{}
	}
	m[k][v] = struct{}{}
}

func (m multiIndex[K]) remove(k K, v *view) {
	delete(m[k], v)
	if len(m[k]) == 0 {
		delete(m, k)
	}
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

func visitSet(set viewSet, s span, fn func(*view)) {
	for v := range set {
		for _, vs := range v.st.spans {
			if vs.meets(s) {
				fn(v)
				break
			}
		}
	}
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
