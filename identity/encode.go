package identity

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Snapshot format, version 1. Integers are minimal unsigned varints; a
// decoder rejects longer encodings, so an Index has exactly one encoding.
//
//	"RWID"                 magic
//	0x01                   version
//	uvarint H              handles 1..H, in order:
//	  uvarint len<<1|r     r = 1 for a retired handle
//	  len bytes            the handle's external id
//	uvarint A              aliases 0..A-1, in order (alias numbers):
//	  uvarint len, bytes   the alias
//	  uvarint owner        its live handle
//	4 bytes                CRC-32C (Castagnoli) of all the above, little endian
//
// A retired handle's id appears twice, as the handle's and as an alias of
// the survivor; the decoder makes both share one string.
const (
	magic     = "RWID"
	version   = 1
	headerLen = len(magic) + 1
	crcLen    = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendBinary appends the snapshot encoding of the Index to dst and returns
// the extended slice; it implements encoding.BinaryAppender, and its error is
// always nil. O(total identifier bytes). Read-only.
func (ix *Index) AppendBinary(dst []byte) ([]byte, error) {
	return ix.appendEncoding(dst, nil), nil
}

// appendEncoding appends the snapshot encoding with the name of every
// alias whose number hide reports written as empty (AppendMasked); nil
// hide: none is. The one writer of the format, so that a masked encoding
// differs from AppendBinary's in those names only.
func (ix *Index) appendEncoding(dst []byte, hide func(n uint32) bool) []byte {
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(ix.MaxHandle()))
	for h := uint32(1); ix.known(h); h++ {
		dst = ix.appendHandle(dst, h)
	}
	dst = binary.AppendUvarint(dst, uint64(len(ix.aliases)))
	for n, a := range ix.aliases {
		name := a.name
		if hide != nil && hide(uint32(n)) {
			name = "" // no identifier is empty: DecodeMasked asks for it
		}
		dst = appendString(dst, name)
		dst = binary.AppendUvarint(dst, uint64(ix.owner(uint32(n))))
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// appendHandle appends handle h's length-and-retired word and id.
func (ix *Index) appendHandle(dst []byte, h uint32) []byte {
	word := uint64(len(ix.names[h])) << 1
	if !ix.isLive(h) {
		word |= 1
	}
	dst = binary.AppendUvarint(dst, word)
	return append(dst, ix.names[h]...)
}

// appendString appends s's length and bytes.
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// MarshalBinary returns the snapshot encoding of the Index (see
// AppendBinary); it implements encoding.BinaryMarshaler. Read-only.
func (ix *Index) MarshalBinary() ([]byte, error) {
	return ix.AppendBinary(make([]byte, 0, 16+24*(len(ix.names)+len(ix.aliases))))
}

// UnmarshalBinary replaces the Index with the one data encodes (see Decode);
// on error the Index is unchanged. Not safe for concurrent use.
func (ix *Index) UnmarshalBinary(data []byte) error {
	d, err := Decode(data)
	if err != nil {
		return err
	}
	*ix = *d
	return nil
}

// Decode returns the Index that data encodes, as AppendBinary wrote it. Any
// damage (a bad magic, version or checksum, truncation, trailing bytes, an
// invalid or duplicate identifier, an owner that is not a live handle, a
// retired handle whose id is not an alias) gives an error wrapping
// ErrCorrupt; Decode never panics. O(len(data)) time; it allocates a small
// constant times len(data), and the identifiers share one copy of data's
// bytes. The returned Index behaves exactly as the encoded one did: the same
// lookups, and the same handles and merges for every later call. Safe for
// concurrent use: it shares nothing with data or other Indexes.
func Decode(data []byte) (*Index, error) { return decode(data, nil) }

// decode is Decode, with masked's names for the aliases written empty
// (DecodeMasked); nil: none may be.
func decode(data []byte, masked func(n, owner uint32) (string, bool)) (*Index, error) {
	body, err := unframe(data)
	if err != nil {
		return nil, err
	}
	r := &reader{buf: body, str: string(body), masked: masked}
	ix := &Index{}
	r.handles(ix)
	owners := r.aliases(ix)
	if r.err == nil && len(r.buf) != 0 {
		r.fail("%d trailing bytes", len(r.buf))
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := ix.index(owners); err != nil {
		return nil, err
	}
	return ix, nil
}

// unframe checks magic, version and checksum, and returns the body between.
func unframe(data []byte) ([]byte, error) {
	if len(data) < headerLen+crcLen || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: not an identity snapshot", ErrCorrupt)
	}
	if v := data[len(magic)]; v != version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, v, version)
	}
	n := len(data) - crcLen
	if binary.LittleEndian.Uint32(data[n:]) != crc32.Checksum(data[:n], castagnoli) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return data[headerLen:n], nil
}
