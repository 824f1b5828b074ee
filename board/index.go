package board

// The member index maps a member handle to the offset of its node. Handles
// are numbered tenant-wide (the identity index), so a board-window with ten
// entries may hold handles near a million: a slice indexed by handle would
// cost 4 bytes per handle of the tenant for every board-window. The index
// therefore has two forms and takes the cheaper:
//
//   - sparse: an open-addressing hash table of 8-byte slots, each
//     (handle+1)<<32 | offset (0: empty), linear probing, at most 3/4 full,
//     deletion by shifting back (no tombstones): 10.7 to 21 bytes per entry,
//     whatever the handles;
//   - dense: a slice indexed by handle, 4 bytes per handle up to the
//     largest one indexed: the cheaper form once the entries are a third or
//     more of the handles, as on a board that holds most of the tenant.
//
// An index starts sparse and turns dense, once, when that is cheaper; it
// never turns back (a board that emptied keeps its slice until it is
// replaced, as a reset does). Both forms answer in O(1) and hold no
// pointers, so the garbage collector never scans them.
type memberIndex struct {
	dense []uint32 // handle -> offset, 0: absent; nil while sparse
	slots []uint64 // the sparse table; its length a power of two
	n     int      // entries in slots
	maxH  uint32   // the largest handle indexed while sparse
}

const minSlots = 8

// hashSlot spreads a handle over 2^bits slots (Fibonacci hashing).
func hashSlot(h uint32, mask uint64) uint64 {
	return (uint64(h) * 0x9E3779B97F4A7C15 >> 32) & mask
}

// get returns the node of member h, or 0. O(1) expected.
func (ix *memberIndex) get(h uint32) uint32 {
	if ix.dense != nil {
		if int(h) < len(ix.dense) {
			return ix.dense[h]
		}
		return 0
	}
	if len(ix.slots) == 0 {
		return 0
	}
	mask := uint64(len(ix.slots) - 1)
	key := uint64(h) + 1
	for i := hashSlot(h, mask); ; i = (i + 1) & mask {
		s := ix.slots[i]
		if s == 0 {
			return 0
		}
		if s>>32 == key {
			return uint32(s)
		}
	}
}

// set maps member h to node x (x != 0), replacing any mapping of h.
// Amortised O(1).
func (ix *memberIndex) set(h, x uint32) {
	if ix.dense != nil {
		if int(h) >= len(ix.dense) {
			ix.dense = append(ix.dense, make([]uint32, int(h)+1-len(ix.dense))...)
		}
		ix.dense[h] = x
		return
	}
	if (ix.n+1)*4 > len(ix.slots)*3 {
		ix.resize(max(minSlots, 2*len(ix.slots)))
	}
	if ix.put(h, x) {
		ix.n++
		ix.maxH = max(ix.maxH, h)
		if uint64(ix.n)*3 >= uint64(ix.maxH)+1 {
			ix.toDense()
		}
	}
}

// swap maps member h to node x (x != 0) and returns h's old mapping, 0
// where h was absent. On the dense form it neither branches on the old
// value nor waits for it: a caller that only folds the results together,
// as Decode does to detect a repeated member, lets the cache misses of
// many random handles overlap.
func (ix *memberIndex) swap(h, x uint32) uint32 {
	if ix.dense != nil && int(h) < len(ix.dense) {
		old := ix.dense[h]
		ix.dense[h] = x
		return old
	}
	old := ix.get(h)
	ix.set(h, x)
	return old
}

// swapAll swaps each member<<32 | node pair in and returns the OR of the
// old mappings: nonzero where some member was already indexed.
func (ix *memberIndex) swapAll(pairs []uint64) uint32 {
	var old uint32
	for _, p := range pairs {
		old |= ix.swap(uint32(p>>32), uint32(p))
	}
	return old
}

// put stores h -> x in the sparse table, reporting whether h is new.
func (ix *memberIndex) put(h, x uint32) bool {
	mask := uint64(len(ix.slots) - 1)
	key := uint64(h) + 1
	for i := hashSlot(h, mask); ; i = (i + 1) & mask {
		s := ix.slots[i]
		if s == 0 || s>>32 == key {
			ix.slots[i] = key<<32 | uint64(x)
			return s == 0
		}
	}
}

// del removes member h, if indexed. O(1) expected.
func (ix *memberIndex) del(h uint32) {
	if ix.dense != nil {
		if int(h) < len(ix.dense) {
			ix.dense[h] = 0
		}
		return
	}
	if len(ix.slots) == 0 {
		return
	}
	mask := uint64(len(ix.slots) - 1)
	key := uint64(h) + 1
	i := hashSlot(h, mask)
	for {
		s := ix.slots[i]
		if s == 0 {
			return
		}
		if s>>32 == key {
			break
		}
		i = (i + 1) & mask
	}
	// Shift back the entries after i whose home slot is not in (i, j]: the
	// probe sequence of every entry stays unbroken.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := ix.slots[j]
		if s == 0 {
			break
		}
		home := hashSlot(uint32(s>>32-1), mask)
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			ix.slots[i] = s
			i = j
		}
	}
	ix.slots[i] = 0
	ix.n--
}

// resize rebuilds the sparse table with size slots.
func (ix *memberIndex) resize(size int) {
	old := ix.slots
	ix.slots = make([]uint64, size)
	for _, s := range old {
		if s != 0 {
			ix.put(uint32(s>>32-1), uint32(s))
		}
	}
}

// toDense turns the index into its dense form.
func (ix *memberIndex) toDense() {
	ix.dense = make([]uint32, int(ix.maxH)+1)
	for _, s := range ix.slots {
		if s != 0 {
			ix.dense[s>>32-1] = uint32(s)
		}
	}
	ix.slots, ix.n = nil, 0
}

// reserve makes room for n more entries with handles up to maxHandle, so
// that building a board of known size allocates the index once.
func (ix *memberIndex) reserve(n int, maxHandle int) {
	if ix.dense != nil {
		ix.dense = grow(ix.dense, maxHandle+1-len(ix.dense))
		return
	}
	if need := (ix.n + n) * 4 / 3; need > len(ix.slots) {
		size := minSlots
		for size < need+1 {
			size *= 2
		}
		ix.resize(size)
	}
}

// each calls f for every indexed member and node.
func (ix *memberIndex) each(f func(h, x uint32)) {
	if ix.dense != nil {
		for h, x := range ix.dense {
			if x != 0 {
				f(uint32(h), x)
			}
		}
		return
	}
	for _, s := range ix.slots {
		if s != 0 {
			f(uint32(s>>32-1), uint32(s))
		}
	}
}

// bytes returns the index's heap size in bytes.
func (ix *memberIndex) bytes() int { return 4*cap(ix.dense) + 8*cap(ix.slots) }
