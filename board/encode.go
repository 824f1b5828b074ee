package board

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Snapshot format, version 1, all integers little-endian or uvarint:
//
//	"RWB" 0x01                     magic and version
//	order subscoreOrder policy tiebreak   one byte each
//	count                          uvarint
//	count entries in rank order:   tag, member uvarint, score, subscore, seq uvarint
//	crc32c                         of every byte before it
//
// A tag's bit 0 (1) says the score is an integer within ±2^53, encoded as a
// zigzag uvarint; otherwise it is 8 bytes of IEEE 754 bits. Bit 1 does the
// same for the subscore. Integer scores, the common case, take 1 to 8 bytes.
const (
	magic         = "RWB\x01"
	tagIntScore   = 1
	tagIntSub     = 2
	minEntryBytes = 5
	maxExactInt   = 1 << 53
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the board as a snapshot. O(N).
func (b *Board) MarshalBinary() ([]byte, error) {
	return b.AppendBinary(make([]byte, 0, 16+b.length*16))
}

// AppendBinary appends the board's snapshot to dst. O(N).
func (b *Board) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	c := b.cfg
	dst = append(dst, magic...)
	dst = append(dst, byte(c.Order), byte(c.SubscoreOrder), byte(c.Policy), byte(c.Tiebreak))
	dst = binary.AppendUvarint(dst, uint64(b.length))
	for x := b.next0(0); x != 0; x = b.next0(x) {
		dst = appendEntry(dst, b.entryAt(x))
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable)), nil
}

func appendEntry(dst []byte, e Entry) []byte {
	tag := byte(0)
	if isExactInt(e.Score) {
		tag |= tagIntScore
	}
	if isExactInt(e.Subscore) {
		tag |= tagIntSub
	}
	dst = append(dst, tag)
	dst = binary.AppendUvarint(dst, uint64(e.Member))
	dst = appendScore(dst, e.Score, tag&tagIntScore != 0)
	dst = appendScore(dst, e.Subscore, tag&tagIntSub != 0)
	return binary.AppendUvarint(dst, e.Seq)
}

func isExactInt(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) <= maxExactInt
}

func appendScore(dst []byte, f float64, asInt bool) []byte {
	if asInt {
		return binary.AppendVarint(dst, int64(f))
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// Decode rebuilds a board from a snapshot. The snapshot's settings (orders,
// policy, tiebreak) replace cfg's; cfg supplies CompareMembers and Seed,
// which must be the ones the snapshot's board used. O(N): entries arrive in
// rank order and are appended, never searched. Corrupt input returns an
// error wrapping ErrCorrupt, never a panic.
func Decode(data []byte, cfg Config) (*Board, error) {
	body, err := checkFrame(data)
	if err != nil {
		return nil, err
	}
	cfg.Order, cfg.SubscoreOrder = Order(body[0]), Order(body[1])
	cfg.Policy, cfg.Tiebreak = Policy(body[2]), Tiebreak(body[3])
	b, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	d := decoder{buf: body[4:]}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)/minEntryBytes) {
		return nil, fmt.Errorf("%w: entry count %d does not fit %d bytes", ErrCorrupt, n, len(d.buf))
	}
	b.Grow(int(n))
	if err := b.appendAll(&d, int(n)); err != nil {
		return nil, err
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last entry", ErrCorrupt, len(d.buf))
	}
	return b, nil
}

// checkFrame verifies magic, version and checksum and returns the bytes
// between them.
func checkFrame(data []byte) ([]byte, error) {
	if len(data) < len(magic)+4+1+4 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(data))
	}
	if string(data[:3]) != magic[:3] {
		return nil, fmt.Errorf("%w: not a board snapshot", ErrCorrupt)
	}
	if data[3] != magic[3] {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorrupt, data[3])
	}
	end := len(data) - 4
	if crc32.Checksum(data[:end], crcTable) != binary.LittleEndian.Uint32(data[end:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return data[len(magic):end], nil
}

// appendAll reads n entries in rank order and appends each after the last,
// keeping the search path to the tail so every append is O(levels).
func (b *Board) appendAll(d *decoder, n int) error {
	var p path
	for i := 0; i < n; i++ {
		e := d.entry()
		if d.err != nil {
			return fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, d.err)
		}
		if err := b.appendOne(e, &p, i); err != nil {
			return err
		}
	}
	return nil
}

func (b *Board) appendOne(e Entry, p *path, i int) error {
	if err := checkFinite(e.Score, e.Subscore); err != nil {
		return fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, err)
	}
	if e.Member > MaxMember {
		return fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, ErrBadMember)
	}
	if b.nodeOf(e.Member) != 0 {
		return fmt.Errorf("%w: entry %d: member %d repeats", ErrCorrupt, i, e.Member)
	}
	k := b.keyOf(e)
	if i > 0 && b.cmp(p.prev[0], &k) >= 0 {
		return fmt.Errorf("%w: entry %d is out of order", ErrCorrupt, i)
	}
	h := b.randomHeight()
	x, err := b.alloc(h)
	if err != nil {
		return err
	}
	b.words[x+wMember] = uint64(h) << 32
	b.writeKey(x, &k)
	r := b.linkNode(x, h, p)
	b.setLoc(e.Member, x)
	for l := 0; l < h; l++ {
		p.prev[l], p.rank[l] = x, r
	}
	return nil
}

// decoder reads entries, recording the first error and returning zeros after.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) entry() Entry {
	if len(d.buf) == 0 {
		d.fail("truncated")
		return Entry{}
	}
	tag := d.buf[0]
	d.buf = d.buf[1:]
	if tag > tagIntScore|tagIntSub {
		d.fail(fmt.Sprintf("unknown tag %#x", tag))
		return Entry{}
	}
	m := d.uvarint()
	if m > math.MaxUint32 {
		d.fail("member handle over 32 bits")
	}
	score := d.score(tag&tagIntScore != 0)
	sub := d.score(tag&tagIntSub != 0)
	return Entry{Member: uint32(m), Score: score, Subscore: sub, Seq: d.uvarint()}
}

func (d *decoder) score(asInt bool) float64 {
	if asInt {
		v, n := binary.Varint(d.buf)
		if n <= 0 || v > maxExactInt || v < -maxExactInt {
			d.fail("bad integer score")
			return 0
		}
		d.buf = d.buf[n:]
		return float64(v)
	}
	if len(d.buf) < 8 {
		d.fail("truncated score")
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.buf))
	d.buf = d.buf[8:]
	return f
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = errors.New(msg)
	}
}
