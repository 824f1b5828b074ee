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
		l := b.leafOf(x)
		for j := range b.count(x) {
			dst = appendEntry(dst, b.entryOf(l, j))
		}
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

// appendAll reads n entries in rank order and appends each after the last:
// leaves are filled to decodeFill and never searched, and the path to the
// tail is kept, so every append is O(levels) and touches memory in order.
func (b *Board) appendAll(d *decoder, n int) error {
	var (
		p    path // the path to the tail tower
		tail uint32
		last key
	)
	fill := b.limit - b.limit/8 // room for a few inserts before a split
	// Members are indexed in batches: a handle is a random write into an
	// index as large as the tenant, a cache (and TLB) miss each, and a
	// tight loop of them keeps many in flight where one per decoded entry
	// would wait for each in turn.
	var (
		batch    [256]uint64 // member<<32 | leaf id
		batched  int
		repeated uint32 // nonzero once a member was indexed twice
	)
	for i := 0; i < n; i++ {
		e := d.entry()
		if d.err != nil {
			return fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, d.err)
		}
		k, err := b.checkAppend(e, i, &last)
		if err != nil {
			return err
		}
		if tail == 0 || b.count(tail) == fill {
			if tail, err = b.appendTower(&k, &p); err != nil {
				return err
			}
		}
		l, c := b.leafOf(tail), b.count(tail)
		l.put(c, &k)
		b.setCount(tail, c+1)
		for i := 1; i < b.level; i++ {
			b.addSpan(p.prev[i], i, 1)
		}
		b.length++
		batch[batched] = uint64(k.member)<<32 | uint64(b.leafID(tail))
		if batched++; batched == len(batch) {
			repeated |= b.loc.swapAll(batch[:])
			batched = 0
		}
		last = k
	}
	repeated |= b.loc.swapAll(batch[:batched])
	if repeated != 0 {
		return fmt.Errorf("%w: a member appears twice", ErrCorrupt)
	}
	return nil
}

// checkAppend returns entry i's key, or why it cannot follow the entry
// before it (whose key is last).
func (b *Board) checkAppend(e Entry, i int, last *key) (key, error) {
	if err := checkFinite(e.Score, e.Subscore); err != nil {
		return key{}, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, err)
	}
	if e.Member > MaxMember {
		return key{}, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, ErrBadMember)
	}
	k := b.keyOf(e)
	if i > 0 && b.cmpKeys(last, &k) >= 0 {
		return key{}, fmt.Errorf("%w: entry %d is out of order", ErrCorrupt, i)
	}
	return k, nil
}

// appendTower links a new, empty tower with key k after the tail, which p
// leads to, and makes p lead to it.
func (b *Board) appendTower(k *key, p *path) (uint32, error) {
	h := b.randomHeight()
	y, err := b.allocTower(h)
	if err != nil {
		return 0, err
	}
	b.writeKey(y, k)
	b.linkAfter(y, h, p, b.length)
	for l := range h {
		p.prev[l], p.rank[l] = y, b.length
	}
	return y, nil
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
