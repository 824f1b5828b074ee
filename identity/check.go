package identity

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
)

// Check walks the Index and returns the first broken invariant, wrapping
// ErrCorrupt, or nil:
//   - every identifier is valid, and each live id, alias and retired id
//     resolves through the table to its own entry;
//   - each alias's set names a live handle, whose set it is, and the set
//     lists it exactly once, with the right size;
//   - no two retired handles share an id;
//   - the live count, the table's count and its load factor agree.
//
// O(N) time and O(aliases) memory: for tests (the model test calls it after
// every step) and debugging, not the hot path. Read-only.
func (ix *Index) Check() error {
	for _, check := range []func() error{ix.checkTable, ix.checkHandles, ix.checkAliases, ix.checkSets} {
		if err := check(); err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
	return nil
}

// checkHandles checks names, the retired bits and the live count.
func (ix *Index) checkHandles() error {
	if len(ix.names) > 0 && ix.names[0] != "" || len(ix.retired) != (len(ix.names)+63)/64 {
		return fmt.Errorf("handle 0 or retired bitset malformed")
	}
	if len(ix.retired) > 0 && ix.retired[0]&1 != 0 {
		return fmt.Errorf("handle 0 marked retired")
	}
	live := 0
	for h := uint32(1); ix.known(h); h++ {
		if err := ix.checkHandle(h); err != nil {
			return fmt.Errorf("handle %d: %w", h, err)
		}
		if ix.isLive(h) {
			live++
		}
	}
	if live != ix.live {
		return fmt.Errorf("%d live handles, count says %d", live, ix.live)
	}
	return nil
}

// checkHandle checks that h's id is valid and resolves as it should.
func (ix *Index) checkHandle(h uint32) error {
	name := ix.names[h]
	if err := Validate(name); err != nil {
		return err
	}
	ref := ix.lookup(name)
	switch {
	case ix.isLive(h) && ref != h:
		return fmt.Errorf("live id %s finds ref %#x", quote(name), ref)
	case !ix.isLive(h) && ref&aliasBit == 0:
		return fmt.Errorf("retired id %s finds ref %#x, not an alias", quote(name), ref)
	}
	return nil
}

// checkAliases checks that each alias is valid, found, and owned by a live
// handle, and counts the retired handles.
func (ix *Index) checkAliases() error {
	for i, a := range ix.aliases {
		if err := Validate(a.name); err != nil {
			return fmt.Errorf("alias %d: %w", i, err)
		}
		if ref := ix.lookup(a.name); ref != aliasBit|uint32(i) {
			return fmt.Errorf("alias %d %s finds ref %#x", i, quote(a.name), ref)
		}
		if int(a.set) >= len(ix.sets) || !ix.isLive(ix.owner(uint32(i))) {
			return fmt.Errorf("alias %d: set %d has no live owner", i, a.set)
		}
	}
	retired := 0
	for _, w := range ix.retired {
		retired += bits.OnesCount64(w)
	}
	if retired != int(ix.MaxHandle())-ix.live {
		return fmt.Errorf("%d retired bits for %d handles, %d live", retired, ix.MaxHandle(), ix.live)
	}
	return nil
}

// checkSets checks that each live handle's set names it back and lists its
// aliases exactly once with the right size, and that every other set is
// empty.
func (ix *Index) checkSets() error {
	seen := make([]bool, len(ix.aliases))
	for _, h := range slices.Sorted(maps.Keys(ix.setOf)) { // the violation reported must not depend on map order
		if err := ix.checkSet(h, ix.setOf[h], seen); err != nil {
			return fmt.Errorf("handle %d: %w", h, err)
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("alias %d in no set", i)
	}
	if empty := countEmpty(ix.sets); len(ix.sets)-empty != len(ix.setOf) {
		return fmt.Errorf("%d sets in use, %d handles with sets", len(ix.sets)-empty, len(ix.setOf))
	}
	return nil
}

// countEmpty counts the sets that merges emptied.
func countEmpty(sets []aliasSet) int {
	n := 0
	for _, s := range sets {
		if s == (aliasSet{}) {
			n++
		}
	}
	return n
}

// checkSet checks live handle h's set s, marking its aliases in seen.
func (ix *Index) checkSet(h, s uint32, seen []bool) error {
	if !ix.isLive(h) || int(s) >= len(ix.sets) || ix.sets[s].handle != h {
		return fmt.Errorf("set %d does not name it back", s)
	}
	size := uint32(0)
	for next := ix.sets[s].head; next != 0; next = ix.aliases[next-1].next {
		n := next - 1
		if int(n) >= len(seen) || seen[n] || ix.aliases[n].set != s {
			return fmt.Errorf("set %d holds alias %d wrongly", s, n)
		}
		seen[n] = true
		size++
	}
	if size == 0 || size != ix.sets[s].size {
		return fmt.Errorf("set %d holds %d aliases, says %d", s, size, ix.sets[s].size)
	}
	return nil
}

// checkTable checks the table's count, load and stored hash bits.
func (ix *Index) checkTable() error {
	if ix.used != ix.live+len(ix.aliases) || ix.used*4 > len(ix.slots)*3 {
		return fmt.Errorf("table holds %d of %d slots for %d live and %d aliases", ix.used, len(ix.slots), ix.live, len(ix.aliases))
	}
	full := 0
	for _, e := range ix.slots {
		if e == 0 {
			continue
		}
		full++
		if ref := uint32(e); !ix.validRef(ref) || ix.frag(ix.key(ref)) != uint32(e>>32) {
			return fmt.Errorf("slot of ref %#x: bad ref or hash bits", ref)
		}
	}
	if full != ix.used {
		return fmt.Errorf("%d full slots, count says %d", full, ix.used)
	}
	return nil
}

// validRef reports whether a table ref names an alias or a live handle.
func (ix *Index) validRef(ref uint32) bool {
	if ref&aliasBit != 0 {
		return int(ref&^aliasBit) < len(ix.aliases)
	}
	return int(ref>>6) < len(ix.retired) && ix.isLive(ref)
}
