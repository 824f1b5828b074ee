package ledger

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Personal data in a snapshot (RWSNAP8). Whatever an erasure erases (a
// member's profile, its linked aliases, the profiles boards recorded at
// their end) is written in one record per live member, sealed under that
// member's key with a Keyring (the hub's: internal/shred), as the log seals
// it: erasing the member destroys the key, and every copy of the record
// (the file, the shared snapshot, its chunks left in a Raft log block)
// turns unreadable at once. The identity index is written with those
// aliases masked (identity.AppendMasked).
//
// A record's shape is in clear: its member's handle and id, whether it has a
// profile, its aliases' numbers, its final profiles' boards and handles
// (and which are blank). None of it is personal data, and it lets a node
// whose key is gone (a snapshot taken before an erasure, read after it)
// rebuild the state with stand-ins in their places, as the log's Unseal
// does: the erasure that follows in the stream then leaves the same state
// as on every other node. A record with nothing personal (an erased
// member's blank final profiles, stand-ins) is written in clear and needs
// no key: an erased member's record holds no personal data at all.
//
// Sealing is deterministic (equal records seal to equal bytes: the
// Keyring's contract), so every node writes the same snapshot for the same
// events. Only members with personal data cost a seal: a snapshot of a
// board whose members have none seals nothing.

// Keyring seals and opens the members' personal data in a snapshot, each
// member's under its own key. The hub's keeps the keys in a stream
// (internal/shred); ledger only calls it.
type Keyring interface {
	// Seal encrypts plaintext under owner's key, deterministically: equal
	// arguments give equal bytes, on every node.
	Seal(owner string, plaintext []byte) ([]byte, error)
	// Open decrypts what Seal returned: the plaintext and true; false
	// where owner's key is gone (erased); an error where it cannot tell
	// now.
	Open(owner string, sealed []byte) ([]byte, bool, error)
}

// ErrKeys reports a snapshot whose sealed records cannot be opened now:
// no Keyring, or one that cannot read the keys.
var ErrKeys = errors.New("ledger: the members' keys cannot open the snapshot")

// Record tags: how a record's personal fields are written.
const (
	recClear  = 0 // in clear: nothing personal, or no Keyring (Encode(nil))
	recSealed = 1 // sealed under the member's key
)

// recAlias is a linked alias kept out of the identity index's bytes.
type recAlias struct {
	owner, n uint32 // its live member, its alias number
	name     string
}

// recFinal is a profile a board recorded at its end.
type recFinal struct {
	owner uint32 // the live member the recorded one is now (identity.Index.Canonical)
	board string
	h     uint32
	p     Profile
}

// personal is a state's personal data, sorted for the records: profiles'
// handles ascending, aliases by owner then number, finals by owner, board
// name, handle.
type personal struct {
	profiles []uint32
	aliases  []recAlias
	finals   []recFinal
}

// personalData gathers s's personal data. O(members with some + aliases
// + handles); nothing per member that has none.
func (s *State) personalData(names []string) *personal {
	p := &personal{profiles: slices.Sorted(maps.Keys(s.profiles)), aliases: make([]recAlias, 0, s.ix.NumAliases())}
	s.ix.EachLinked(func(n uint32, name string, owner uint32) {
		if !IsPseudonym(name) && !isStandIn(name) {
			p.aliases = append(p.aliases, recAlias{owner: owner, n: n, name: name})
		}
	})
	slices.SortFunc(p.aliases, func(a, b recAlias) int { return cmp.Or(cmp.Compare(a.owner, b.owner), cmp.Compare(a.n, b.n)) })
	for _, name := range names {
		final := s.boards[name].final
		for _, h := range slices.Sorted(maps.Keys(final)) {
			c, _ := s.ix.Canonical(h)
			p.finals = append(p.finals, recFinal{owner: c, board: name, h: h, p: final[h]})
		}
	}
	slices.SortStableFunc(p.finals, func(a, b recFinal) int { return cmp.Compare(a.owner, b.owner) })
	return p
}

// isStandIn reports whether alias is the stand-in of an alias whose key
// is gone ("sealed.<hex>": Event.Unseal, standIn): no personal data.
func isStandIn(alias string) bool {
	rest, ok := cutPrefix(alias, "sealed.")
	if !ok || rest == "" {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// blank reports whether p is no personal data: none, or the stand-in of a
// profile whose key is gone.
func blank(p Profile) bool { return p == Profile{} || p == Profile{Name: ErasedName} }

// record is one live member's personal data: slices of a personal's.
type record struct {
	h       uint32
	has     bool // it has a profile
	profile Profile
	aliases []recAlias
	finals  []recFinal
}

// records calls fn with p's records by handle ascending, one at a time
// (a million records are not held at once), their profiles not filled
// in (the caller looks them up where has is set). O(len of p's lists).
func (p *personal) records(fn func(r *record)) {
	var r record // one for all: fn's pointer would make one per record escape
	i, j, k := 0, 0, 0
	for i < len(p.profiles) || j < len(p.aliases) || k < len(p.finals) {
		h := uint32(math.MaxUint32)
		if i < len(p.profiles) {
			h = p.profiles[i]
		}
		if j < len(p.aliases) {
			h = min(h, p.aliases[j].owner)
		}
		if k < len(p.finals) {
			h = min(h, p.finals[k].owner)
		}
		r = record{h: h}
		if i < len(p.profiles) && p.profiles[i] == h {
			r.has = true
			i++
		}
		j0, k0 := j, k
		for j < len(p.aliases) && p.aliases[j].owner == h {
			j++
		}
		for k < len(p.finals) && p.finals[k].owner == h {
			k++
		}
		r.aliases, r.finals = p.aliases[j0:j], p.finals[k0:k]
		fn(&r)
	}
}

// records writes the records section and returns which alias numbers it
// holds (masked in the identity index), as a slice indexed by number.
func (w *snapWriter) records(s *State, names []string) []bool {
	p := s.personalData(names)
	masked := make([]bool, s.ix.NumAliases())
	n := 0
	p.records(func(*record) { n++ })
	w.uint(uint64(n))
	body := &snapWriter{}
	p.records(func(r *record) {
		r.profile = s.profiles[r.h]
		for _, a := range r.aliases {
			masked[a.n] = true
		}
		owner, _ := s.ix.Name(r.h)
		w.record(r, owner, body)
	})
	return masked
}

// record writes one record: its shape in clear, then its personal fields
// (body's scratch space), in clear; where any is personal data, its place
// in w.spots, for Prepared.Seal to seal it under owner's key.
func (w *snapWriter) record(r *record, owner string, body *snapWriter) {
	w.uint(uint64(r.h))
	w.str(owner)
	w.uint(b2u(r.has))
	w.uint(uint64(len(r.aliases)))
	for _, a := range r.aliases {
		w.uint(uint64(a.n))
	}
	w.uint(uint64(len(r.finals)))
	for _, f := range r.finals {
		w.str(f.board)
		w.uint(uint64(f.h)<<1 | b2u(f.p == Profile{}))
	}
	body.buf = body.buf[:0]
	personal := len(r.aliases) > 0
	if r.has {
		body.profile(r.profile)
		personal = personal || !blank(r.profile)
	}
	for _, a := range r.aliases {
		body.str(a.name)
	}
	for _, f := range r.finals {
		if f.p != (Profile{}) {
			body.profile(f.p)
			personal = personal || !blank(f.p)
		}
	}
	if personal { // sealed by Prepared.Seal where it has a Keyring
		w.spots = append(w.spots, sealSpot{at: len(w.buf), owner: owner})
	}
	w.uint(recClear)
	w.bytes(body.buf)
}

func (w *snapWriter) profile(p Profile) {
	w.str(p.Name)
	w.str(p.Avatar)
	w.str(p.Country)
}

// readRecords is the records section read back: each record's aliases
// and final profiles are ranges of the flat lists (one allocation for all,
// not one per member).
type readRecords struct {
	recs    []openRecord
	aliases []recAlias
	finals  []recFinal
}

// openRecord is a record read back: its personal fields opened, or
// stand-ins where its key is gone.
type openRecord struct {
	h       uint32
	owner   string
	has     bool // it has a profile
	profile Profile
	a0, a1  int // its aliases: readRecords.aliases[a0:a1]
	f0, f1  int // its final profiles: readRecords.finals[f0:f1]
}

// records reads the records section, opening sealed ones with r.kr.
func (r *snapReader) records() *readRecords {
	rr := &readRecords{}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		o := openRecord{h: r.handle(), owner: r.str()}
		has := r.uint()
		o.has, o.a0 = has == 1, len(rr.aliases)
		for m := r.count(); m > 0 && r.err == nil; m-- {
			rr.aliases = append(rr.aliases, recAlias{owner: o.h, n: r.handle()})
		}
		o.a1, o.f0 = len(rr.aliases), len(rr.finals)
		for m := r.count(); m > 0 && r.err == nil; m-- {
			board, word := r.str(), r.uint()
			rr.finals = append(rr.finals, recFinal{owner: o.h, board: board, h: uint32(word >> 1), p: Profile{Name: b2s(word&1 == 0)}})
		}
		o.f1 = len(rr.finals)
		tag, data := r.uint(), r.bytes()
		if r.err != nil || has > 1 || tag > recSealed {
			r.fail("record")
			return rr
		}
		if pt, ok := r.open(o.owner, tag, data); ok {
			r.fill(rr, &o, pt)
		} else if r.err == nil {
			rr.standIns(&o, data)
		}
		rr.recs = append(rr.recs, o)
	}
	return rr
}

// b2s is a non-empty name where set: a final profile that is not blank
// (its fields follow in the record's body).
func b2s(set bool) string {
	if set {
		return ErasedName
	}
	return ""
}

// handle reads a handle: at most MaxUint32.
func (r *snapReader) handle() uint32 {
	h := r.uint()
	if h > math.MaxUint32 {
		r.fail("handle")
		return 0
	}
	return uint32(h)
}

// open returns a record's body in clear: as written (recClear), or opened
// with r.kr; false where the key is gone. Where r.kr cannot tell, r.err
// wraps ErrKeys.
func (r *snapReader) open(owner string, tag uint64, data []byte) ([]byte, bool) {
	if tag == recClear {
		return data, true
	}
	if r.kr == nil {
		r.err = fmt.Errorf("%w: a sealed record and no keys", ErrKeys)
		return nil, false
	}
	pt, ok, err := r.kr.Open(owner, data)
	if err != nil {
		r.err = fmt.Errorf("%w: %v", ErrKeys, err)
		return nil, false
	}
	return pt, ok
}

// fill reads a record's body into o and its ranges of rr.
func (r *snapReader) fill(rr *readRecords, o *openRecord, body []byte) {
	b := &snapReader{buf: body}
	if o.has {
		o.profile = b.profile()
	}
	for i := o.a0; i < o.a1; i++ {
		rr.aliases[i].name = b.str()
	}
	for i := o.f0; i < o.f1; i++ {
		if rr.finals[i].p != (Profile{}) {
			rr.finals[i].p = b.profile()
		}
	}
	if b.err != nil || len(b.buf) != 0 {
		r.fail("record body")
	}
}

func (r *snapReader) profile() Profile {
	return Profile{Name: r.str(), Avatar: r.str(), Country: r.str()}
}

// standIns fills o's personal fields with stand-ins, where its key is
// gone: a profile named ErasedName, an alias "sealed.<hash>" of the sealed
// bytes and its number (Event.Unseal's kind), the same on every node; a
// final profile not blank already reads ErasedName (records).
func (rr *readRecords) standIns(o *openRecord, sealed []byte) {
	if o.has {
		o.profile = Profile{Name: ErasedName}
	}
	for i := o.a0; i < o.a1; i++ {
		sum := sha256.Sum256(binary.AppendUvarint(slices.Clip(sealed), uint64(rr.aliases[i].n)))
		rr.aliases[i].name = "sealed." + hex.EncodeToString(sum[:12])
	}
}

// maskedNames returns the names of rr's aliases for identity.DecodeMasked,
// which asks for them by number ascending, and a check that it asked for
// each. It sorts rr.aliases by number.
func (rr *readRecords) maskedNames() (func(n, owner uint32) (string, bool), func() bool) {
	slices.SortFunc(rr.aliases, func(a, b recAlias) int { return cmp.Compare(a.n, b.n) })
	next := 0
	return func(n, owner uint32) (string, bool) {
			if next == len(rr.aliases) || rr.aliases[next].n != n || rr.aliases[next].owner != owner {
				return "", false
			}
			next++
			return rr.aliases[next-1].name, true
		}, func() bool {
			return next == len(rr.aliases)
		}
}

// applyRecords puts recs' profiles and final profiles into s, checking
// each against the identity index and the boards: a record's member live
// and named so, handles ascending, a final profile's board known and its
// member the record's.
func (r *snapReader) applyRecords(s *State, rr *readRecords) {
	prev := int64(-1)
	for _, o := range rr.recs {
		if name, ok := s.ix.Name(o.h); !ok || name != o.owner || int64(o.h) <= prev {
			r.fail("record's member")
			return
		}
		prev = int64(o.h)
		if o.has {
			if q, err := o.profile.normalize(); err != nil || q != o.profile {
				r.fail("profile")
				return
			}
			if s.profiles == nil {
				s.profiles = map[uint32]Profile{}
			}
			s.profiles[o.h] = o.profile
		}
		for _, f := range rr.finals[o.f0:o.f1] {
			r.final(s, f)
		}
	}
}

// final puts one final profile read back into its board's record.
func (r *snapReader) final(s *State, f recFinal) {
	bs := s.boards[f.board]
	c, ok := s.ix.Canonical(f.h)
	if q, err := f.p.normalize(); bs == nil || !ok || c != f.owner || (f.p != Profile{} && (err != nil || q != f.p)) {
		r.fail("final profile")
		return
	}
	if _, dup := bs.final[f.h]; dup {
		r.fail("final profile: twice")
		return
	}
	if bs.final == nil {
		bs.final = map[uint32]Profile{}
	}
	bs.final[f.h] = f.p
}
