package ledger

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Sealing a snapshot in two steps. Encode's seals (one per member with
// personal data, several microseconds each) would stall the replica that
// snapshots, which must see its state at one sequence while it encodes:
// at a million members with profiles, seconds of no applies. So the
// encoding is split: Prepare writes the snapshot with every record in
// clear (Encode(nil)'s bytes, the cost of the clear encoding) and notes
// where the records to seal sit; Prepared.Seal, on any goroutine and
// later, seals them with a Keyring and recomputes the checksum. A record
// is plain bytes once prepared, so the result is byte for byte what
// Encode(kr) gives at that sequence whenever it is sealed: the Keyring
// seals deterministically (equal arguments, equal bytes).
//
// Erasure stays whole: a record is sealed under its member's key as the
// Keyring holds it when Seal runs. Where the key was destroyed since the
// state was prepared (an erasure applied meanwhile), the hub's Keyring
// refuses (no new key is made for an erased member) and the snapshot is
// not written; the erasure's own snapshot, prepared after it applied,
// holds no personal data of the member at all.

// sealSpot is where a record to seal sits in a Prepared's clear bytes:
// its tag (recClear, one byte), then its body's length and its body.
type sealSpot struct {
	at    int
	owner string // the record's member id: whose key seals it
}

// Prepared is a state's snapshot before its personal data is sealed
// (State.Prepare). Immutable: safe for concurrent use.
type Prepared struct {
	clear []byte // Encode(nil)'s bytes
	spots []sealSpot
}

// Clear returns the snapshot with the members' personal data in clear:
// Encode(nil)'s bytes, for comparisons and digests in memory, never for a
// file. The caller must not modify them. O(1).
func (p *Prepared) Clear() []byte { return p.clear }

// Seal returns the snapshot with the members' personal data sealed with
// kr: Encode(kr)'s bytes at the prepared sequence (nil kr: Clear). O(size)
// plus a seal per member with personal data. An error where kr cannot
// seal one (ErrKeys' causes; the hub's: a key destroyed by an erasure).
func (p *Prepared) Seal(kr Keyring) ([]byte, error) {
	if kr == nil || len(p.spots) == 0 {
		return p.clear, nil
	}
	const overhead = 1 + 12 + 16 + binary.MaxVarintLen64 // AES-GCM's nonce and tag, a longer length
	out := make([]byte, 0, len(p.clear)+len(p.spots)*overhead)
	prev := 0
	for _, sp := range p.spots {
		n, w := binary.Uvarint(p.clear[sp.at+1:])
		body := p.clear[sp.at+1+w : sp.at+1+w+int(n)]
		sealed, err := kr.Seal(sp.owner, body)
		if err != nil {
			return nil, fmt.Errorf("ledger: sealing a member's personal data: %w", err)
		}
		out = append(out, p.clear[prev:sp.at]...)
		out = binary.AppendUvarint(out, recSealed)
		out = binary.AppendUvarint(out, uint64(len(sealed)))
		out = append(out, sealed...)
		prev = sp.at + 1 + w + int(n)
	}
	out = append(out, p.clear[prev:len(p.clear)-crc32.Size]...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}
