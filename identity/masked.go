package identity

import "slices"

// Masked encodings. A linked alias may be personal data (an e-mail): a
// caller that must keep such names out of a snapshot in clear (rankwire
// seals them under a per-member key) writes the Index with AppendMasked,
// which leaves the names it hides out (an empty name, which no identifier
// is), keeps them elsewhere, and hands them back to DecodeMasked. Alias
// numbers, owners and everything else are written as AppendBinary writes
// them, so a masked encoding decodes into exactly the Index encoded.

// EachLinked calls f with the number, name and live owner of every linked
// alias (an alias that is not the former id of a merged handle), in alias
// number order. O(handles + aliases). Read-only.
func (ix *Index) EachLinked(f func(n uint32, name string, owner uint32)) {
	former := make([]bool, len(ix.aliases))
	for h := uint32(1); ix.known(h); h++ {
		if !ix.isLive(h) {
			if ref := ix.lookup(ix.names[h]); ref&aliasBit != 0 {
				former[ref&^aliasBit] = true
			}
		}
	}
	for n, a := range ix.aliases {
		if !former[n] {
			f(uint32(n), a.name, ix.owner(uint32(n)))
		}
	}
}

// AppendMasked is AppendBinary with the name of every alias whose number
// hide reports written as empty: its error is always nil. O(total
// identifier bytes). Read-only.
func (ix *Index) AppendMasked(dst []byte, hide func(n uint32) bool) ([]byte, error) {
	dst = slices.Grow(dst, 16+24*(len(ix.names)+len(ix.aliases))) // as MarshalBinary sizes it
	return ix.appendEncoding(dst, hide), nil
}

// DecodeMasked is Decode of an encoding AppendMasked wrote: name returns
// the name of each alias written empty, given its number and owner, or
// false where it has none (ErrCorrupt). The names are validated as Decode
// validates every identifier. O(len(data)).
func DecodeMasked(data []byte, name func(n, owner uint32) (string, bool)) (*Index, error) {
	return decode(data, name)
}
