package identity

// Aliases live in sets, one per live handle that has any. An alias names
// its set, and the set names its live handle, so a merge relabels the
// smaller of the two sets only (union by size): merging a member with a
// million aliases into a new one costs O(1), and any sequence of merges
// costs O(aliases × log aliases) in all, whatever order the links come in.

// alias is an identifier besides a live member's own id: a linked alias, or
// the former id of a retired handle. 24 bytes.
type alias struct {
	name string
	set  uint32 // index into sets: the set's handle is the alias's owner
	next uint32 // 1 + the next alias number in the set's list; 0 ends it
}

// aliasSet is the aliases of one live handle, a singly linked list through
// alias.next. A set emptied by a merge stays in sets as the zero value.
type aliasSet struct {
	handle uint32 // the live handle every alias in the set resolves to
	head   uint32 // 1 + the first alias number
	size   uint32
}

// owner returns the live handle alias number n resolves to.
func (ix *Index) owner(n uint32) uint32 {
	return ix.sets[ix.aliases[n].set].handle
}

// own puts alias number n at the head of live handle h's set, creating the
// set if h has none.
func (ix *Index) own(h, n uint32) {
	s, ok := ix.setOf[h]
	if !ok {
		if ix.setOf == nil {
			ix.setOf = make(map[uint32]uint32)
		}
		s = uint32(len(ix.sets))
		ix.sets = append(ix.sets, aliasSet{handle: h})
		ix.setOf[h] = s
	}
	ix.aliases[n].set = s
	ix.aliases[n].next = ix.sets[s].head
	ix.sets[s].head = n + 1
	ix.sets[s].size++
}

// moveSet gives live handle into the aliases of live handle from, which
// keeps none. O(the smaller of the two sets).
func (ix *Index) moveSet(from, into uint32) {
	src, ok := ix.setOf[from]
	if !ok {
		return
	}
	delete(ix.setOf, from)
	dst, ok := ix.setOf[into]
	switch {
	case !ok:
		dst = src
	case ix.sets[src].size > ix.sets[dst].size: // relabel the smaller set
		ix.absorb(src, dst)
		dst = src
	default:
		ix.absorb(dst, src)
	}
	ix.sets[dst].handle = into
	ix.setOf[into] = dst
}

// absorb moves every alias of set src into set dst and empties src.
// O(size of src).
func (ix *Index) absorb(dst, src uint32) {
	n := ix.sets[src].head - 1
	for {
		ix.aliases[n].set = dst
		if ix.aliases[n].next == 0 {
			break
		}
		n = ix.aliases[n].next - 1
	}
	ix.aliases[n].next = ix.sets[dst].head
	ix.sets[dst].head = ix.sets[src].head
	ix.sets[dst].size += ix.sets[src].size
	ix.sets[src] = aliasSet{}
}
