package ledger

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"slices"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// A snapshot is one tenant's state at a stream sequence, as bytes (the hub
// keeps them in files and in the cluster's bucket). Layout, all integers
// uvarints unless noted:
//
//	magic "RWSNAP8\n"  seq
//	nrecords; per live member with personal data, by handle (snapshot_personal.go):
//	  handle  member id  has profile  naliases; per alias: alias number
//	  nfinal; per final profile, by board name then handle: board name  handle<<1|blank
//	  tag (0 clear, 1 sealed)  len+body: [name avatar country]  per alias: name
//	    per final profile not blank: name avatar country  (sealed under the member's key)
//	len+identity.Index bytes (identity.AppendMasked: the records' aliases blank)  nboards
//	per board, by name: name  len+settings JSON  nseen
//	  per kept idempotency id, in the order applied (seen.go):
//	    digest (16 bytes)  member  score f64  subscore f64  rank  applied  seq  at (varint)  reason  qid
//	  nwindows; per window, by kind then start: kind  start (varint)  seq  len+board bytes
//	  the quarantine (rules.go): last qid  nheld
//	    per held item, by qid: qid  member  score f64  subscore f64  reason  at (varint)  handle
//	  minute (varint)  ncounts; per count, by handle: handle  count
//	  the history (history.go): points recorded in all  nkept
//	    per kept point, oldest first: member  at (varint)  score f64  rank  total  window start (varint)
//	  the disputes (dispute.go): revision  settled  settled at (varint)  ndisqualified
//	    per disqualified handle, ascending: handle
//	    nactions; per action, oldest first: seq  at (varint)  action  member  sub  reason  revision  ref
//	      (ref: a void's voided seq, an approve's or reject's qid, else 0)
//	    nvoided; per voided submission, by window start then seq: window start (varint)  seq
//	nschedules; per schedule, by name (schedule_state.go):
//	  name  len+schedule JSON  since (varint)  last (varint)  last board  last error
//	CRC-32C of everything before, 4 bytes little-endian
//
// Strings are length-prefixed. The encoding is deterministic: equal states
// give equal files. A snapshot of an older layout (RWSNAP1, which kept the
// ids themselves and not their acceptance times; RWSNAP2, without the
// quarantine) is refused like a damaged one (ErrCorrupt): the node replays the
// stream, which gives the same state as every other node's. RWSNAP3, the
// layout without the disputes and the final profiles, is read as boards with
// none: it was written before any dispute event could exist. RWSNAP4 is the
// layout without the final profiles, read as boards with none: they are
// recorded only by events a version writing RWSNAP5 applied. RWSNAP5 is the
// layout without voided submissions (AdminAction.Voided and the voided
// set), read as boards with none: only a version writing RWSNAP6 applies
// EvVoid.
// RWSNAP6 is the layout without the schedules, read as none: only a
// version writing RWSNAP7 applies EvSchedule.
// RWSNAP7 kept the personal data in clear: the identity index whole, then
// after the boards "nprofiles; per profile, by handle: handle  name  avatar
// country" and "nfinal; per board with profiles recorded at its end, by
// name: name  nprofiles; per profile, by handle: handle  name  avatar
// country (all "": none)" (RWSNAP5 and RWSNAP6 too; RWSNAP3 and RWSNAP4
// without the finals). It reads as it did; a node writes RWSNAP8 next.

const (
	snapMagic   = "RWSNAP8\n"
	snapMagicV7 = "RWSNAP7\n" // read, never written
	snapMagicV6 = "RWSNAP6\n" // read, never written
	snapMagicV5 = "RWSNAP5\n" // read, never written
	snapMagicV4 = "RWSNAP4\n" // read, never written
	snapMagicV3 = "RWSNAP3\n" // read, never written
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns s's snapshot, the members' personal data sealed with kr
// (snapshot_personal.go); nil kr writes it in clear, for comparisons in
// memory only (Diff, a digest), never for a file. Deterministic: equal
// states and keys give equal bytes. O(state), plus a seal per member with
// personal data; it only reads s, so readers may proceed meanwhile. An
// error where kr cannot seal (ErrKeys' causes: a key not readable now, or
// destroyed by an erasure not yet applied here).
func (s *State) Encode(kr Keyring) ([]byte, error) {
	p, err := s.Prepare()
	if err != nil {
		return nil, err
	}
	return p.Seal(kr)
}

// Prepare returns s's snapshot with the members' personal data still in
// clear, and where it is to be sealed: the part of Encode that must see s
// at one sequence, without the seals (snapshot_seal.go). O(state), the cost
// of Encode(nil); it only reads s. The Prepared holds no reference to s:
// it may be sealed on another goroutine while s moves on.
func (s *State) Prepare() (*Prepared, error) {
	w := &snapWriter{buf: []byte(snapMagic), spots: []sealSpot{}}
	data, err := s.encode(w)
	if err != nil {
		return nil, err
	}
	return &Prepared{clear: data, spots: w.spots}, nil
}

// encode writes s's snapshot with w, whose layout flags say which version
// (tests write older ones to check that they still read).
func (s *State) encode(w *snapWriter) ([]byte, error) {
	w.uint(s.seq)
	names := s.sortedBoards()
	ix, err := w.index(s, names)
	if err != nil {
		return nil, err
	}
	w.bytes(ix)
	w.uint(uint64(len(names)))
	for _, name := range names {
		if err := w.board(name, s.boards[name]); err != nil {
			return nil, err
		}
	}
	if w.old() {
		w.profiles(s.profiles)
		w.finals(s, names)
	}
	if !w.v5 && !w.v6 {
		w.schedules(s)
	}
	return binary.LittleEndian.AppendUint32(w.buf, crc32.Checksum(w.buf, castagnoli)), nil
}

// index writes the records section (RWSNAP8) and returns the identity
// index's bytes, the records' aliases masked; before RWSNAP8, the index
// whole.
func (w *snapWriter) index(s *State, names []string) ([]byte, error) {
	if w.old() {
		return s.ix.MarshalBinary()
	}
	masked := w.records(s, names)
	return s.ix.AppendMasked(nil, func(n uint32) bool { return masked[n] })
}

// snapWriter appends the snapshot encoding.
type snapWriter struct {
	buf   []byte
	spots []sealSpot // the records to seal (Prepared); nil: none recorded (old layouts)
	v5    bool       // write the RWSNAP5 layout (tests only): no voided submissions, no schedules
	v6    bool       // write the RWSNAP6 layout (tests only): no schedules
	v7    bool       // write the RWSNAP7 layout (tests only): personal data in clear
}

// old reports whether w writes a layout before RWSNAP8 (tests only).
func (w *snapWriter) old() bool { return w.v5 || w.v6 || w.v7 }

func (w *snapWriter) uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *snapWriter) int(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *snapWriter) float(f float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(f))
}
func (w *snapWriter) str(s string)   { w.uint(uint64(len(s))); w.buf = append(w.buf, s...) }
func (w *snapWriter) bytes(b []byte) { w.uint(uint64(len(b))); w.buf = append(w.buf, b...) }

func (w *snapWriter) board(name string, bs *boardState) error {
	w.str(name)
	set, err := json.Marshal(bs.settings)
	if err != nil {
		return err
	}
	w.bytes(set)
	w.uint(uint64(bs.seen.len()))
	bs.seen.each(w.seen)
	keys := bs.sortedWindows()
	w.uint(uint64(len(keys)))
	for _, k := range keys {
		if err := w.window(k, bs.windows[k]); err != nil {
			return err
		}
	}
	w.quarantine(&bs.quarantine)
	w.history(&bs.history)
	w.disputes(&bs.disputes)
	return nil
}

// disputes writes a board's amendments, the disqualified by handle.
func (w *snapWriter) disputes(d *disputes) {
	w.uint(uint64(d.revision))
	w.uint(b2u(d.settled))
	w.int(d.settleAt)
	handles := slices.Sorted(maps.Keys(d.disq))
	w.uint(uint64(len(handles)))
	for _, h := range handles {
		w.uint(uint64(h))
	}
	w.uint(uint64(len(d.actions)))
	for _, a := range d.actions {
		w.uint(a.Seq)
		w.int(a.At)
		w.str(a.Action)
		w.str(a.Member)
		w.str(a.Sub)
		w.str(a.Reason)
		w.uint(uint64(a.Revision))
		if !w.v5 {
			w.uint(a.ref())
		}
	}
	if w.v5 {
		return
	}
	voided := slices.SortedFunc(maps.Keys(d.voided), func(a, b voidKey) int {
		return cmp.Or(cmp.Compare(a.window, b.window), cmp.Compare(a.seq, b.seq))
	})
	w.uint(uint64(len(voided)))
	for _, k := range voided {
		w.int(k.window)
		w.uint(k.seq)
	}
}

// history writes a board's kept history points, oldest first.
func (w *snapWriter) history(hs *history) {
	w.uint(hs.next)
	w.uint(uint64(min(hs.next, uint64(len(hs.pts)))))
	hs.each(func(p point) {
		w.uint(uint64(p.member))
		w.int(p.at)
		w.float(p.score)
		w.uint(uint64(p.rank))
		w.uint(uint64(p.total))
		w.int(p.window)
	})
}

// profiles writes the members' profiles by handle.
func (w *snapWriter) profiles(ps map[uint32]Profile) {
	handles := slices.Sorted(maps.Keys(ps))
	w.uint(uint64(len(handles)))
	for _, h := range handles {
		p := ps[h]
		w.uint(uint64(h))
		w.str(p.Name)
		w.str(p.Avatar)
		w.str(p.Country)
	}
}

// finals writes the profiles boards recorded at their end, by board name
// (names sorted), only boards that recorded some.
func (w *snapWriter) finals(s *State, names []string) {
	n := 0
	for _, name := range names {
		if len(s.boards[name].final) > 0 {
			n++
		}
	}
	w.uint(uint64(n))
	for _, name := range names {
		if final := s.boards[name].final; len(final) > 0 {
			w.str(name)
			w.profiles(final)
		}
	}
}

// quarantine writes a board's held items and per-minute counts, the
// counts by handle so that equal states give equal bytes.
func (w *snapWriter) quarantine(q *quarantine) {
	w.uint(q.last)
	w.uint(uint64(len(q.held)))
	for _, h := range q.held {
		w.uint(h.QID)
		w.str(h.Member)
		w.float(h.Score)
		w.float(h.Subscore)
		w.uint(uint64(h.Reason))
		w.int(h.At)
		w.uint(uint64(h.handle))
	}
	w.int(q.minute)
	handles := slices.Sorted(maps.Keys(q.counts))
	w.uint(uint64(len(handles)))
	for _, h := range handles {
		w.uint(uint64(h))
		w.uint(uint64(q.counts[h]))
	}
}

func (w *snapWriter) seen(d idDigest, e seenEntry) {
	w.buf = append(w.buf, d[:]...)
	w.str(e.member)
	w.float(e.score)
	w.float(e.subscore)
	w.uint(uint64(e.rank))
	w.uint(b2u(e.applied))
	w.uint(e.seq)
	w.int(e.at)
	w.uint(uint64(e.reason))
	w.uint(e.qid)
}

func (w *snapWriter) window(k windowKey, win *window) error {
	data, err := win.b.MarshalBinary()
	if err != nil {
		return err
	}
	w.uint(uint64(k.kind))
	w.int(k.start)
	w.uint(win.seq)
	w.bytes(data)
	return nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// snapReader decodes the snapshot encoding; the first error sticks and
// every later read returns zero values, so decoders check err once.
type snapReader struct {
	buf []byte
	err error
	v3  bool // an RWSNAP3 snapshot: boards carry no disputes
	v5  bool // an RWSNAP5 (or older) snapshot: no voided submissions
	kr  Keyring
}

func (r *snapReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at %d bytes from the end", ErrCorrupt, what, len(r.buf))
	}
}

func (r *snapReader) uint() uint64 {
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *snapReader) int() int64 {
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *snapReader) bytes() []byte {
	n := r.uint()
	if n > uint64(len(r.buf)) {
		r.fail("truncated")
		return nil
	}
	b := r.buf[:n:n]
	r.buf = r.buf[n:]
	return b
}

func (r *snapReader) str() string { return string(r.bytes()) }

func (r *snapReader) float() float64 {
	if len(r.buf) < 8 {
		r.fail("truncated float")
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.buf))
	r.buf = r.buf[8:]
	return f
}

// count reads a count, bounded by the bytes left (every element takes at
// least one), so corrupt input cannot make us allocate without bound.
func (r *snapReader) count() int {
	n := r.uint()
	if n > uint64(len(r.buf)) {
		r.fail("count past the end")
		return 0
	}
	return int(n)
}

// Decode rebuilds a state from a snapshot, opening the members' personal
// data with kr (stand-ins where a key is gone: snapshot_personal.go). Any
// damage gives an error wrapping ErrCorrupt, never a panic; sealed data
// that kr cannot open now (or a nil kr), one wrapping ErrKeys.
// O(len(data)), plus an Open per member with personal data.
func Decode(data []byte, kr Keyring) (*State, error) {
	if len(data) < len(snapMagic)+4 {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	magic := string(data[:len(snapMagic)])
	if !slices.Contains([]string{snapMagic, snapMagicV7, snapMagicV6, snapMagicV5, snapMagicV4, snapMagicV3}, magic) {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	r := &snapReader{buf: body[len(snapMagic):], v3: magic == snapMagicV3, kr: kr,
		v5: magic != snapMagic && magic != snapMagicV7 && magic != snapMagicV6}
	s := &State{boards: make(map[string]*boardState), maxMembers: board.MaxMember}
	s.seq = r.uint()
	recs := &readRecords{}
	if magic == snapMagic {
		recs = r.records()
	}
	if err := r.index(s, recs, magic == snapMagic); err != nil {
		return nil, err
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		r.board(s)
	}
	if magic != snapMagic {
		s.profiles = r.profiles(s, false)
	}
	if magic == snapMagicV7 || magic == snapMagicV6 || magic == snapMagicV5 {
		r.finals(s)
	}
	if magic == snapMagic || magic == snapMagicV7 {
		r.schedules(s)
	}
	if magic == snapMagic {
		r.applyRecords(s, recs)
	}
	if r.err == nil && len(r.buf) != 0 {
		r.fail("trailing bytes")
	}
	return s, r.err
}

// index reads the identity index into s, its masked aliases named by
// recs where masked (RWSNAP8).
func (r *snapReader) index(s *State, recs *readRecords, masked bool) error {
	data := r.bytes()
	if r.err != nil {
		return r.err
	}
	var err error
	if !masked {
		s.ix, err = identity.Decode(data)
	} else {
		names, all := recs.maskedNames()
		if s.ix, err = identity.DecodeMasked(data, names); err == nil && !all() {
			err = errors.New("a record's alias is not in the index")
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
}

func (r *snapReader) board(s *State) {
	name := r.str()
	var set Settings
	if err := json.Unmarshal(r.bytes(), &set); err != nil && r.err == nil {
		r.fail("settings: " + err.Error())
		return
	}
	set, err := set.normalize()
	if err != nil || r.err != nil {
		r.fail("settings")
		return
	}
	bs := s.newBoardState(set)
	s.boards[name] = bs
	for n := r.count(); n > 0 && r.err == nil; n-- {
		r.seen(bs.seen)
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		r.window(bs)
	}
	r.quarantine(&bs.quarantine)
	r.history(&bs.history)
	if !r.v3 {
		r.disputes(&bs.disputes)
	}
}

// disputes reads a board's amendments.
func (r *snapReader) disputes(d *disputes) {
	d.revision, d.settled, d.settleAt = int(r.uint()), r.uint() == 1, r.int()
	for n := r.count(); n > 0 && r.err == nil; n-- {
		if d.disq == nil {
			d.disq = map[uint32]struct{}{}
		}
		d.disq[uint32(r.uint())] = struct{}{}
	}
	n := r.count()
	if n > MaxAdminActions {
		r.fail("admin actions")
		return
	}
	for ; n > 0 && r.err == nil; n-- {
		a := AdminAction{Seq: r.uint(), At: r.int(), Action: r.str(), Member: r.str(), Sub: r.str(), Reason: r.str()}
		a.Revision = int(r.uint())
		if !r.v5 {
			a.setRef(r.uint())
		}
		d.actions = append(d.actions, a)
	}
	if !r.v5 {
		r.voided(d)
	}
}

// voided reads a board's voided submissions.
func (r *snapReader) voided(d *disputes) {
	n := r.count()
	if n > MaxVoids {
		r.fail("voided submissions")
		return
	}
	for ; n > 0 && r.err == nil; n-- {
		if d.voided == nil {
			d.voided = map[voidKey]struct{}{}
		}
		d.voided[voidKey{window: r.int(), seq: r.uint()}] = struct{}{}
	}
}

// history reads a board's history points into the ring a board that
// recorded next points in all would have, at their absolute places. That
// ring is full (the writer writes every point it keeps: as many as next
// or the ring's capacity allow), so n must be exactly that many: fewer
// would leave empty points that the state's own encoding writes and no
// decoding accepts (a fuzzed input found it).
func (r *snapReader) history(hs *history) {
	next, n := r.uint(), r.count()
	if r.err != nil || uint64(n) != min(next, uint64(capFor(next))) {
		r.fail("history")
		return
	}
	if c := capFor(next); c > 0 {
		hs.pts = make([]point, c)
		hs.head = map[uint32]uint64{}
	}
	hs.next = next - uint64(n)
	for ; n > 0 && r.err == nil; n-- {
		p := point{member: uint32(r.uint()), at: r.int(), score: r.float()}
		rank, total := r.uint(), r.uint()
		p.window = r.int()
		if rank == 0 || rank > math.MaxUint32 || total > math.MaxUint32 {
			r.fail("history point")
			return
		}
		p.rank, p.total = uint32(rank), uint32(total)
		p.prev = hs.head[p.member]
		hs.pts[hs.next%uint64(len(hs.pts))] = p
		hs.next++
		hs.head[p.member] = hs.next
	}
}

// profiles reads profiles by handle: handles increasing, each one the
// identity index has handed out, each profile valid, or zero where
// zeroOK (a board's final profiles record "none" so). Nil where none.
func (r *snapReader) profiles(s *State, zeroOK bool) map[uint32]Profile {
	var out map[uint32]Profile
	prev := int64(-1)
	for n := r.count(); n > 0 && r.err == nil; n-- {
		h := r.uint()
		p := Profile{Name: r.str(), Avatar: r.str(), Country: r.str()}
		if r.err != nil {
			return nil
		}
		if int64(h) <= prev || h > uint64(s.ix.MaxHandle()) {
			r.fail("profile handle")
			return nil
		}
		if q, err := p.normalize(); (err != nil || q != p) && !(zeroOK && p == Profile{}) {
			r.fail("profile")
			return nil
		}
		prev = int64(h)
		if out == nil {
			out = map[uint32]Profile{}
		}
		out[uint32(h)] = p
	}
	return out
}

// finals reads the profiles boards recorded at their end: boards by name
// increasing, each one the snapshot holds, each with some.
func (r *snapReader) finals(s *State) {
	prev := ""
	for n := r.count(); n > 0 && r.err == nil; n-- {
		name := r.str()
		bs := s.boards[name]
		if r.err != nil || bs == nil || (prev != "" && name <= prev) {
			r.fail("final profiles' board")
			return
		}
		prev = name
		if bs.final = r.profiles(s, true); r.err == nil && len(bs.final) == 0 {
			r.fail("final profiles: none")
			return
		}
	}
}

// quarantine reads a board's held items (QIDs increasing, none past the
// last handed out) and per-minute counts (handles increasing).
func (r *snapReader) quarantine(q *quarantine) {
	q.last = r.uint()
	for n := r.count(); n > 0 && r.err == nil; n-- {
		h := Held{QID: r.uint(), Member: r.str(), Score: r.float(), Subscore: r.float(), Reason: Reason(r.uint()), At: r.int()}
		handle := r.uint()
		if h.QID == 0 || h.QID > q.last || (len(q.held) > 0 && h.QID <= q.held[len(q.held)-1].QID) ||
			h.Reason == ReasonNone || h.Reason >= ReasonFull || handle > math.MaxUint32 {
			r.fail("held item")
			return
		}
		h.handle = uint32(handle)
		q.held = append(q.held, h)
		q.mark(h.handle, 1)
	}
	q.minute = r.int()
	n := r.count()
	if n > 0 {
		q.counts = make(map[uint32]uint32, n)
	}
	prev := int64(-1)
	for ; n > 0 && r.err == nil; n-- {
		h, c := r.uint(), r.uint()
		if int64(h) <= prev || h > math.MaxUint32 || c == 0 || c > math.MaxUint32 {
			r.fail("minute count")
			return
		}
		prev = int64(h)
		q.counts[uint32(h)] = uint32(c)
	}
}

// seen reads one kept idempotency id into s, in the order applied.
func (r *snapReader) seen(s *seenIDs) {
	if len(r.buf) < len(idDigest{}) {
		r.fail("truncated id digest")
		return
	}
	d := idDigest(r.buf[:len(idDigest{})])
	r.buf = r.buf[len(idDigest{}):]
	res := Result{Member: r.str(), Score: r.float(), Subscore: r.float()}
	res.Rank = int(r.uint())
	res.Applied = r.uint() == 1
	res.Seq = r.uint()
	at := r.int()
	res.Reason, res.QID = Reason(r.uint()), r.uint()
	if _, dup := s.m[d]; dup || r.err != nil {
		r.fail("id digest")
		return
	}
	s.put(d, at, res)
}

func (r *snapReader) window(bs *boardState) {
	k := windowKey{kind: kind(r.uint()), start: r.int()}
	seq, data := r.uint(), r.bytes()
	if r.err != nil || int(k.kind) >= len(kindNames) {
		r.fail("window key")
		return
	}
	b, err := board.Decode(data, bs.cfg)
	if err != nil {
		r.fail("board: " + err.Error())
		return
	}
	bs.windows[k] = &window{b: b, seq: seq, key: k, name: bs.cal.name(k)}
	if !bs.has[k.kind] || k.start > bs.newest[k.kind] {
		bs.newest[k.kind], bs.has[k.kind] = k.start, true
	}
}
