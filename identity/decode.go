package identity

import (
	"encoding/binary"
	"fmt"
)

// reader parses a snapshot body. The first failure sticks in err, after
// which every read returns zero values, so callers check err once.
//
// str is a string copy of the whole body and advances with buf: every
// identifier is a substring of it, so decoding allocates once for all of
// them, and each costs its exact length rather than an allocation rounded
// up to a size class. Identifiers are never deleted, so no one of them
// pins memory that would otherwise be freed.
type reader struct {
	buf  []byte
	str  string
	err  error
	kind string // "handle" or "alias" while reading one, for messages
	item uint64 // its number

	masked func(n, owner uint32) (string, bool) // the names of aliases written empty (masked.go); nil: none may be
}

// fail records the first failure, naming the item being read.
func (r *reader) fail(format string, args ...any) {
	if r.err != nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if r.kind != "" {
		msg = fmt.Sprintf("%s %d: %s", r.kind, r.item, msg)
	}
	r.err = fmt.Errorf("%w: %s", ErrCorrupt, msg)
}

// uvarint reads a minimal varint no greater than limit.
func (r *reader) uvarint(limit uint64, what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	switch {
	case n <= 0:
		r.fail("%s: truncated or overflowing varint", what)
	case n > 1 && r.buf[n-1] == 0:
		r.fail("%s: overlong varint", what)
	case v > limit:
		r.fail("%s: %d is over %d", what, v, limit)
	default:
		r.skip(n)
		return v
	}
	return 0
}

// skip advances past n bytes.
func (r *reader) skip(n int) {
	r.buf, r.str = r.buf[n:], r.str[n:]
}

// ident reads n bytes as an identifier and validates it.
func (r *reader) ident(n uint64, what string) string {
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.buf)) {
		r.fail("%s: %d bytes, %d left", what, n, len(r.buf))
		return ""
	}
	s := r.str[:n]
	r.skip(int(n))
	if err := Validate(s); err != nil {
		r.fail("%s: %v", what, err)
	}
	return s
}

// handles reads the handle section into ix.names, ix.retired and ix.live.
func (r *reader) handles(ix *Index) {
	// Each handle takes at least two bytes, which bounds the allocation.
	n := r.uvarint(min(uint64(len(r.buf)/2), maxIdentifiers), "handle count")
	ix.names = make([]string, 1, n+1)
	ix.retired = make([]uint64, (n+1+63)/64)
	r.kind = "handle"
	for h := uint32(1); uint64(h) <= n && r.err == nil; h++ {
		r.item = uint64(h)
		word := r.uvarint(2*MaxLen+1, "id length")
		ix.names = append(ix.names, r.ident(word>>1, "id"))
		if word&1 != 0 {
			ix.retired[h>>6] |= 1 << (h & 63)
		} else {
			ix.live++
		}
	}
	r.kind = ""
}

// aliases reads the alias section into ix.aliases and returns each
// alias's owner; handles came first.
func (r *reader) aliases(ix *Index) []uint32 {
	// Each alias takes at least three bytes (two where masked: masked.go),
	// which bounds the allocation.
	least := uint64(3)
	if r.masked != nil {
		least = 2
	}
	n := r.uvarint(uint64(len(r.buf))/least, "alias count")
	if r.err == nil && uint64(ix.MaxHandle())+n > maxIdentifiers {
		r.fail("%d handles and %d aliases are too many", ix.MaxHandle(), n)
	}
	ix.aliases = make([]alias, 0, n)
	owners := make([]uint32, 0, n)
	r.kind = "alias"
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.item = i
		n := r.uvarint(MaxLen, "length")
		var name string
		if n > 0 || r.masked == nil {
			name = r.ident(n, "identifier")
		}
		owner := uint32(r.uvarint(uint64(ix.MaxHandle()), "owner"))
		if r.err == nil && !ix.isLive(owner) {
			r.fail("owner %d is not a live handle", owner)
		}
		if n == 0 && r.masked != nil && r.err == nil {
			name = r.unmask(uint32(i), owner)
		}
		ix.aliases = append(ix.aliases, alias{name: name})
		owners = append(owners, owner)
	}
	r.kind = ""
	return owners
}

// unmask returns the name of masked alias n of owner, validated.
func (r *reader) unmask(n, owner uint32) string {
	name, ok := r.masked(n, owner)
	if !ok {
		r.fail("no name for a masked alias")
		return ""
	}
	if err := Validate(name); err != nil {
		r.fail("masked identifier: %v", err)
	}
	return name
}

// index builds the table and alias lists of a freshly read Index, rejecting
// duplicate identifiers and retired ids that resolve to no alias.
func (ix *Index) index(owners []uint32) error {
	ix.reserveSlots(ix.live + len(ix.aliases))
	for h := uint32(1); ix.known(h); h++ {
		if ix.isLive(h) && !ix.insert(ix.names[h], h) {
			return fmt.Errorf("%w: handle %d: duplicate id %s", ErrCorrupt, h, quote(ix.names[h]))
		}
	}
	for i, a := range ix.aliases {
		if !ix.insert(a.name, aliasBit|uint32(i)) {
			return fmt.Errorf("%w: alias %d: duplicate identifier %s", ErrCorrupt, i, quote(a.name))
		}
		ix.own(owners[i], uint32(i))
	}
	return ix.shareRetired()
}

// shareRetired points each retired handle's id at the alias it became, so
// the string is held once, and checks that no two retired handles share one.
func (ix *Index) shareRetired() error {
	claimed := make(map[uint32]bool)
	for h := uint32(1); ix.known(h); h++ {
		if ix.isLive(h) {
			continue
		}
		ref := ix.lookup(ix.names[h])
		if ref&aliasBit == 0 || claimed[ref] {
			return fmt.Errorf("%w: retired handle %d: id %s is not an alias of its own", ErrCorrupt, h, quote(ix.names[h]))
		}
		claimed[ref] = true
		ix.names[h] = ix.aliases[ref&^aliasBit].name
	}
	return nil
}
