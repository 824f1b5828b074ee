package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Personal data and its erasure. A member's profile and linked aliases are
// personal data; its member id, entries, scores and ranks are not (the
// operator's own pseudonymous key, kept so that standings and payouts
// stay true). An EvErase event (DELETE /v1/members/{id}/personal-data)
// deletes the profile, blanks the profile every ended board recorded at
// its end (its standings then show the member id), and renames every
// linked alias to a pseudonym ("erased.<seq>.<n>"), in stream order, so
// every node and every replay agree.
//
// The log must hold nothing erasure cannot reach, so the hub seals the
// personal fields of EvProfile and EvLink events under a per-member key
// (internal/shred) and erasure destroys the key: Event.Sealed carries the
// ciphertext, and the hub's Unseal fills Profile and Aliases back before
// apply. Where a key is gone (a replay after an erasure), Unseal fills
// placeholders instead: the erasure that follows in the stream removes
// them, and apply treats a sealed profile as a change whatever it says,
// so the board seqs a replay computes equal those of the live nodes.

// Sealed holds an event's personal fields sealed under the key of member
// Owner: what the log stores instead of Event.Profile and the new aliases
// of Event.Aliases. Never read by apply: Unseal turns it back.
type Sealed struct {
	Owner   string   `json:"o"`           // the member id whose key sealed them
	Profile []byte   `json:"p,omitempty"` // EvProfile: the sealed JSON of the Profile
	Aliases [][]byte `json:"a,omitempty"` // EvLink: sealed aliases, appended to Aliases
}

// ErasedName is the name a placeholder profile shows: the profile of a
// sealed event whose key was destroyed (only ever seen between such an
// event and the erasure that follows it in a replay).
const ErasedName = "erased"

// Opener decrypts a sealed field with owner's key: the plaintext, or false
// where the key is gone or the ciphertext is not its (both mean erased).
type Opener func(owner string, sealed []byte) ([]byte, bool)

// Unseal fills ev's Profile and Aliases from ev.Sealed with open, or
// placeholders where open cannot: a profile named ErasedName, an alias
// "sealed.<hash of its ciphertext>", deterministic on every node. No-op
// for an event without Sealed.
func (ev *Event) Unseal(open Opener) {
	sl := ev.Sealed
	if sl == nil {
		return
	}
	if sl.Profile != nil {
		p := Profile{Name: ErasedName}
		if pt, ok := open(sl.Owner, sl.Profile); ok {
			var q Profile
			if json.Unmarshal(pt, &q) == nil {
				p = q
			}
		}
		ev.Profile = &p
	}
	for _, ct := range sl.Aliases {
		pt, ok := open(sl.Owner, ct)
		if !ok {
			sum := sha256.Sum256(ct)
			pt = []byte("sealed." + hex.EncodeToString(sum[:12]))
		}
		ev.Aliases = append(ev.Aliases, string(pt))
	}
}

// PersonalData is what the state holds about one member, for an export
// (GET /v1/members/{id}/personal-data).
type PersonalData struct {
	Member  string
	Aliases []string
	Profile *Profile // nil: none
	Entries []PersonalEntry
}

// PersonalEntry is one of the member's entries: a board-window that ranks
// it.
type PersonalEntry struct {
	Board    string
	Window   string // "all", or "day:2026-11-27" and the like
	Rank     int
	Score    float64
	Subscore float64
}

// PersonalData returns what the state holds about member (an id or
// alias), or false where it names nobody. Entries are sorted by board
// name, then window. O(boards × windows × log N). Read lock.
func (s *State) PersonalData(member string) (PersonalData, bool) {
	h, ok := s.ix.Resolve(member)
	if !ok {
		return PersonalData{}, false
	}
	name, _ := s.ix.Name(h)
	out := PersonalData{Member: name, Aliases: s.ix.Aliases(h)}
	if p, ok := s.profiles[h]; ok {
		out.Profile = &p
	}
	for _, bname := range slices.Sorted(maps.Keys(s.boards)) {
		bs := s.boards[bname]
		keys := slices.SortedFunc(maps.Keys(bs.windows), compareKeys)
		for _, k := range keys {
			if row, ok := bs.windows[k].b.Get(h); ok {
				out.Entries = append(out.Entries, PersonalEntry{Board: bname, Window: bs.cal.name(k),
					Rank: row.Rank, Score: row.Score, Subscore: row.Subscore})
			}
		}
	}
	return out, true
}

// compareKeys orders window keys by kind, then start.
func compareKeys(a, b windowKey) int {
	if a.kind != b.kind {
		return int(a.kind) - int(b.kind)
	}
	switch {
	case a.start < b.start:
		return -1
	case a.start > b.start:
		return 1
	}
	return 0
}

// applyErase erases ev.Member's personal data (see the top of this file).
// A member that names nobody erases nothing and is no error: an erasure
// is asked again after a restore (docs/OPERATIONS.md).
func (s *State) applyErase(seq uint64, ev *Event) error {
	if err := s.checkMemberReach(ev.Member, ev.Reach, "erasing its personal data"); err != nil {
		return err
	}
	h, ok := s.ix.Resolve(ev.Member)
	if !ok {
		return nil
	}
	s.freezeProfile(h, ev.At)     // ended boards record the end's profile, blanked next
	for _, bs := range s.boards { // any order: each board's record is its own
		for x := range bs.final {
			if c, ok := s.ix.Canonical(x); ok && c == h {
				bs.final[x] = Profile{}
			}
		}
	}
	if _, had := s.profiles[h]; had {
		delete(s.profiles, h)
		for name, bs := range s.boards { // open boards show the row again, without the profile
			if !bs.ended(ev.At) {
				s.touch(name, bs, h)
			}
		}
	}
	s.ix.Erase(h, IsPseudonym, func(i int) string { return s.pseudonym(seq, i) })
	return nil
}

// IsPseudonym reports whether alias is the name an erasure gave an erased
// alias ("erased.<seq>.<n>", maybe followed by "~"s): a later erasure
// leaves it as it is. O(len(alias)).
func IsPseudonym(alias string) bool {
	rest, ok := strings.CutPrefix(strings.TrimRight(alias, "~"), "erased.")
	seq, n, ok2 := strings.Cut(rest, ".")
	return ok && ok2 && digits(seq) && digits(n)
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pseudonym is the name of the i-th erased alias of the erasure at seq:
// "erased.<seq>.<i>", with "~" appended while another identifier has it.
func (s *State) pseudonym(seq uint64, i int) string {
	p := "erased." + strconv.FormatUint(seq, 10) + "." + strconv.Itoa(i)
	for {
		if _, taken := s.ix.Resolve(p); !taken {
			return p
		}
		p += "~"
	}
}

// LinkPlan is how the hub logs an EvLink without personal data in clear:
// Owner, the member id that stands for the member (an alias given as the
// member resolves to its id); Plain, the ids of the members that aliases
// already name (linking them merges those members, as linking the alias
// would, and the alias moves with its member); Private, the aliases that
// name nobody yet, which the hub seals under Owner's key.
type LinkPlan struct {
	Owner   string
	Plain   []string
	Private []string
}

// PlanLink plans linking aliases to member (see LinkPlan). An alias that
// already names member itself is left out: linking it again changes
// nothing. Read lock. O(len(aliases)).
func (s *State) PlanLink(member string, aliases []string) LinkPlan {
	p := LinkPlan{Owner: s.OwnerOf(member)}
	h, known := s.ix.Resolve(member)
	for _, a := range aliases {
		other, ok := s.ix.Resolve(a)
		switch {
		case !ok:
			p.Private = append(p.Private, a)
		case known && other == h:
		default:
			name, _ := s.ix.Name(other)
			p.Plain = append(p.Plain, name)
		}
	}
	return p
}

// OwnerOf returns the member id that member (an id or alias) stands for:
// its canonical id where it names a member, else member itself (a new
// member's id). Read lock. O(1).
func (s *State) OwnerOf(member string) string {
	if h, ok := s.ix.Resolve(member); ok {
		name, _ := s.ix.Name(h)
		return name
	}
	return member
}

// ByID returns items with each member that names one (an id or alias)
// given as its member's id, as the hub logs a submission: apply resolves
// an alias to that id anyway, so the state is the same, and the log holds
// no linked alias in clear. A member that names nobody stays as given (a
// new member's id). items itself where none changes, else a copy. Read
// lock. O(len(items)).
func (s *State) ByID(items []Item) []Item {
	out, copied := items, false
	for i, it := range items {
		if id := s.OwnerOf(it.Member); id != it.Member {
			if !copied { // the caller's slice is never written
				out, copied = slices.Clone(items), true
			}
			out[i].Member = id
		}
	}
	return out
}

// Owners returns the member ids whose keys may have sealed member's
// personal data: its own, then the former ids of the members merged into
// it, sorted; nil where member names nobody. Read lock. O(handles).
func (s *State) Owners(member string) []string {
	h, ok := s.ix.Resolve(member)
	if !ok {
		return nil
	}
	name, _ := s.ix.Name(h)
	return append([]string{name}, s.ix.FormerIDs(h)...)
}
