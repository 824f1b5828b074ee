package identity

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
)

// Index maps one tenant's identifiers to member handles. The zero Index is
// empty and ready to use. Not safe for concurrent use with a write: an Index
// has one owning goroutine that writes; reads may run concurrently with each
// other while no write runs (see the package doc).
type Index struct {
	seed  maphash.Seed // set when slots is first allocated
	slots []uint64     // open-addressing table, see table.go
	used  int          // non-empty slots: live ids plus aliases

	names   []string // names[h]: the id handle h was created for; names[0] is ""
	retired []uint64 // bit h set: handle h collapsed into another handle
	live    int      // handles not retired

	aliases []alias           // alias number → identifier, its set, next in the set's list
	sets    []aliasSet        // see aliases.go
	setOf   map[uint32]uint32 // live handle → its set; absent when it has no aliases

	limit int // cap on handles plus aliases; 0 means maxIdentifiers (tests lower it)
}

// New returns an empty Index, the same as the zero Index.
func New() *Index {
	return &Index{}
}

// Intern returns the live handle idOrAlias resolves to, creating the next
// handle for a new member id. The error wraps ErrEmpty, ErrTooLong,
// ErrInvalid (see Validate) or ErrFull; nothing changes then. Called on every
// submission: an existing identifier costs one hash and usually one string
// comparison and allocates nothing; a new one stores a copy of id (so a
// caller's large buffer is never pinned). Not safe for concurrent use.
func (ix *Index) Intern(idOrAlias string) (uint32, error) {
	if h, ok := ix.Resolve(idOrAlias); ok {
		return h, nil
	}
	if err := Validate(idOrAlias); err != nil {
		return 0, err
	}
	if err := ix.reserve(1); err != nil {
		return 0, err
	}
	return ix.newHandle(idOrAlias), nil
}

// reserve reports ErrFull unless n more handles or aliases fit.
func (ix *Index) reserve(n int) error {
	limit := ix.limit
	if limit == 0 {
		limit = maxIdentifiers
	}
	if have := int(ix.MaxHandle()) + len(ix.aliases); have+n > limit {
		return fmt.Errorf("%w: %d held, %d more would pass %d", ErrFull, have, n, limit)
	}
	return nil
}

// newHandle stores a copy of the new, valid id under the next handle.
func (ix *Index) newHandle(id string) uint32 {
	if len(ix.names) == 0 {
		ix.names = append(ix.names, "") // handle 0 means none
	}
	h := uint32(len(ix.names))
	ix.names = append(ix.names, strings.Clone(id))
	if int(h>>6) >= len(ix.retired) {
		ix.retired = append(ix.retired, 0)
	}
	ix.insert(ix.names[h], h)
	ix.live++
	return h
}

// Resolve returns the live handle a member id or alias resolves to, or false.
// A retired handle's former id resolves to the handle it merged into. O(1)
// expected: one hash and usually one string comparison; no allocation.
// Read-only.
func (ix *Index) Resolve(idOrAlias string) (uint32, bool) {
	ref := ix.lookup(idOrAlias)
	switch {
	case ref == 0:
		return 0, false
	case ref&aliasBit != 0:
		return ix.owner(ref &^ aliasBit), true
	}
	return ref, true
}

// known reports whether h was ever assigned.
func (ix *Index) known(h uint32) bool {
	return h != 0 && int(h) < len(ix.names)
}

// isLive reports whether h was assigned and not retired.
func (ix *Index) isLive(h uint32) bool {
	return ix.known(h) && ix.retired[h>>6]&(1<<(h&63)) == 0
}

// Name returns the external id of live handle h, or false for 0, an unknown
// handle or a retired one. O(1), no allocation. Read-only.
func (ix *Index) Name(h uint32) (string, bool) {
	if !ix.isLive(h) {
		return "", false
	}
	return ix.names[h], true
}

// Label returns the external id handle h was assigned, live or retired
// (merged into another), or false for 0 or an unknown handle. A board
// whose entries a merge did not fold (an ended tournament keeps its final
// standings) still names its members with it. O(1), no allocation.
// Read-only.
func (ix *Index) Label(h uint32) (string, bool) {
	if !ix.known(h) {
		return "", false
	}
	return ix.names[h], true
}

// Canonical returns the live handle that h is now: h itself while live, the
// handle it merged into (following later merges) once retired, or false for
// 0 or an unknown handle. O(1) expected. Read-only.
func (ix *Index) Canonical(h uint32) (uint32, bool) {
	switch {
	case !ix.known(h):
		return 0, false
	case ix.isLive(h):
		return h, true
	}
	// A retired handle's id is an alias of the survivor, kept current by merges.
	return ix.Resolve(ix.names[h])
}

// Aliases returns the identifiers besides its own id that resolve to live
// handle h, sorted bytewise, or nil when there are none or h is not live.
// They include the former ids of handles merged into h. O(k log k) for k
// aliases; allocates the returned slice. Read-only.
func (ix *Index) Aliases(h uint32) []string {
	if !ix.isLive(h) {
		return nil
	}
	s, ok := ix.setOf[h]
	if !ok {
		return nil
	}
	out := make([]string, 0, ix.sets[s].size)
	for next := ix.sets[s].head; next != 0; next = ix.aliases[next-1].next {
		out = append(out, ix.aliases[next-1].name)
	}
	slices.Sort(out)
	return out
}

// NumAliases returns how many aliases the index holds, former ids of
// merged handles included. O(1). Read-only.
func (ix *Index) NumAliases() int { return len(ix.aliases) }

// MostAliases returns the most aliases one live member has: what a
// tenant's alias limit is checked against. O(alias sets). Read-only.
func (ix *Index) MostAliases() int {
	most := 0
	for _, s := range ix.setOf {
		most = max(most, int(ix.sets[s].size))
	}
	return most
}

// Len returns the number of live members. O(1). Read-only.
func (ix *Index) Len() int {
	return ix.live
}

// MaxHandle returns the highest handle ever assigned, live or retired, or 0
// when none was: every handle lies in 1..MaxHandle(). O(1). Read-only.
func (ix *Index) MaxHandle() uint32 {
	if len(ix.names) == 0 {
		return 0
	}
	return uint32(len(ix.names) - 1)
}

// Compare orders handles by their external ids bytewise, the board's final
// tiebreak: -1 when a's id sorts first, +1 when b's does, 0 only when a == b.
// A retired handle keeps the id it was created with (ids are never reused, so
// the order is total); unknown handles sort after all known ones, by number.
// O(shorter id), no allocation. Read-only.
func (ix *Index) Compare(a, b uint32) int {
	ka, kb := ix.known(a), ix.known(b)
	switch {
	case ka && kb:
		return strings.Compare(ix.names[a], ix.names[b])
	case ka:
		return -1
	case kb:
		return 1
	}
	return cmp.Compare(a, b)
}
