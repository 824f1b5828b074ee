package identity

import "hash/maphash"

// The table maps every resolvable identifier to a ref: a live handle h for a
// member's own id (the key is names[h]), or aliasBit|i for alias number i
// (the key is aliases[i].name). Keys are not stored in the table, so each
// identifier's bytes live once.
//
// It is open addressing with linear probing over 8-byte slots: the high 32
// bits hold 32 bits of the key's hash, the low 32 bits the ref. A zero slot
// is empty: refs are never 0. The stored hash bits let a probe skip
// non-matching slots without loading their strings, and let grow rehash
// without touching strings. Entries are never deleted (a merge repoints a
// slot in place), so there are no tombstones. The table stays at most three
// quarters full.
const (
	aliasBit = 1 << 31
	// maxIdentifiers caps handles plus aliases: handles and alias numbers
	// stay below aliasBit, and the table below 1<<32 slots, which the 32 hash
	// bits can address.
	maxIdentifiers = aliasBit - 1
	minSlots       = 8
)

// frag is the hash fragment stored in a slot and used to place it.
func (ix *Index) frag(s string) uint32 {
	return uint32(maphash.String(ix.seed, s) >> 32)
}

// key returns the identifier a ref names.
func (ix *Index) key(ref uint32) string {
	if ref&aliasBit != 0 {
		return ix.aliases[ref&^aliasBit].name
	}
	return ix.names[ref]
}

// find returns the slot holding s and true, or the empty slot where s
// belongs and false. The table must have slots.
func (ix *Index) find(s string, frag uint32) (int, bool) {
	mask := uint32(len(ix.slots) - 1)
	for i := frag & mask; ; i = (i + 1) & mask {
		e := ix.slots[i]
		if e == 0 {
			return int(i), false
		}
		if uint32(e>>32) == frag && ix.key(uint32(e)) == s {
			return int(i), true
		}
	}
}

// lookup returns s's ref, or 0 when s is not in the table. Read-only.
func (ix *Index) lookup(s string) uint32 {
	if ix.used == 0 {
		return 0
	}
	i, ok := ix.find(s, ix.frag(s))
	if !ok {
		return 0
	}
	return uint32(ix.slots[i])
}

// insert adds s with ref and reports true, or reports false and changes
// nothing when s is already present. The key of ref must already read as s.
func (ix *Index) insert(s string, ref uint32) bool {
	if (ix.used+1)*4 > len(ix.slots)*3 {
		ix.resize(max(minSlots, 2*len(ix.slots)))
	}
	frag := ix.frag(s)
	i, found := ix.find(s, frag)
	if found {
		return false
	}
	ix.slots[i] = uint64(frag)<<32 | uint64(ref)
	ix.used++
	return true
}

// repoint gives the present key s a new ref whose key also reads as s.
func (ix *Index) repoint(s string, ref uint32) {
	frag := ix.frag(s)
	i, _ := ix.find(s, frag)
	ix.slots[i] = uint64(frag)<<32 | uint64(ref)
}

// reserveSlots sizes the table for n entries at once (Decode).
func (ix *Index) reserveSlots(n int) {
	size := minSlots
	for n*4 > size*3 {
		size *= 2
	}
	if size > len(ix.slots) {
		ix.resize(size)
	}
}

// resize moves every entry into a table of size slots, a power of two.
// O(slots); reads no strings. The first call seeds the hash.
func (ix *Index) resize(size int) {
	if ix.slots == nil {
		ix.seed = maphash.MakeSeed()
	}
	old := ix.slots
	ix.slots = make([]uint64, size)
	mask := uint32(size - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := uint32(e>>32) & mask
		for ix.slots[i] != 0 {
			i = (i + 1) & mask
		}
		ix.slots[i] = e
	}
}
