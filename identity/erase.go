package identity

import "slices"

// Erasure. A member's linked aliases may be personal data (an e-mail, a
// phone number): Erase renames each of them to a pseudonym that the caller
// chooses, so that the old identifier resolves to nothing and is in no
// snapshot taken afterwards. The former ids of handles merged into the
// member stay: they are member ids, which erasure keeps (the boards that
// rank a retired handle still name it by its id). Handles are never
// renumbered, so boards, merges and snapshots stay consistent.

// Erase renames every alias of live handle h that is not the former id of
// a handle merged into h, nor one that keep keeps (nil: none; an earlier
// erasure's pseudonym, say): alias i (in alias number order, the order
// the aliases were added) gets the name pseudonym(i), which must be a valid
// identifier resolving to nothing, distinct for each i. The order never
// depends on the names: a node that knows an alias only by a stand-in
// (its name sealed under an erased key) renames it as a node that knew the
// name does. It returns how many aliases it renamed (0
// where h is not live or has none). Deterministic. O(handles + aliases of
// h × log). Not safe for concurrent use.
func (ix *Index) Erase(h uint32, keep func(name string) bool, pseudonym func(i int) string) int {
	if !ix.isLive(h) {
		return 0
	}
	s, ok := ix.setOf[h]
	if !ok {
		return 0
	}
	former := ix.formerIDs(h)
	var nums []uint32
	for next := ix.sets[s].head; next != 0; next = ix.aliases[next-1].next {
		if name := ix.aliases[next-1].name; !former[name] && (keep == nil || !keep(name)) {
			nums = append(nums, next-1)
		}
	}
	slices.Sort(nums)
	for i, n := range nums {
		ix.remove(ix.aliases[n].name)
		ix.aliases[n].name = pseudonym(i)
		ix.insert(ix.aliases[n].name, aliasBit|n)
	}
	return len(nums)
}

// formerIDs returns the ids of the retired handles that now resolve to h.
// O(handles).
func (ix *Index) formerIDs(h uint32) map[string]bool {
	out := map[string]bool{}
	for r := uint32(1); ix.known(r); r++ {
		if ix.isLive(r) {
			continue
		}
		if c, ok := ix.Canonical(r); ok && c == h {
			out[ix.names[r]] = true
		}
	}
	return out
}

// remove deletes the present key s from the table by backward shift, so
// that linear probing needs no tombstones: each later entry of the probe
// run moves into the hole unless its home slot lies cyclically after the
// hole and at or before its own slot.
func (ix *Index) remove(s string) {
	i, ok := ix.find(s, ix.frag(s))
	if !ok {
		return
	}
	mask := uint32(len(ix.slots) - 1)
	hole := uint32(i)
	for j := (hole + 1) & mask; ix.slots[j] != 0; j = (j + 1) & mask {
		home := uint32(ix.slots[j]>>32) & mask
		if (j-home)&mask >= (j-hole)&mask { // home is at or before the hole
			ix.slots[hole] = ix.slots[j]
			hole = j
		}
	}
	ix.slots[hole] = 0
	ix.used--
}

// FormerIDs returns the ids of the members merged into live handle h,
// sorted bytewise. O(handles): erasure only. Read-only.
func (ix *Index) FormerIDs(h uint32) []string {
	var out []string
	for id := range ix.formerIDs(h) {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
