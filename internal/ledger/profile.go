package ledger

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/rankwire/rankwire/board"
)

// Profiles. A member may have a public profile (a display name, an avatar
// URL, a country) that reads and live views show beside its rows. A
// profile belongs to the member, not to a board: it is tenant state, set by
// an EvProfile event, keyed by the member's handle, and follows a merge
// (the surviving member keeps its own, or takes the merged one's where it
// had none). Setting it is a change of every board-window that ranks the
// member: each gets a new seq and a change at the member's rank, so that
// every live view showing the member sends its row again. Boards that have
// ended are left alone (their seq and standings never change), and keep
// showing the profile as it was at their end: payouts are made to the
// final standings, so a later rename, even a legitimate one, must not
// change who they print. The first change after a board's end (a profile,
// a merge) records the old profile in the board's state (boardState.final)
// before it changes: in stream order, so every node and every snapshot
// agrees, and only for members whose profile ever changes after the end.

// Profile is a member's public profile. Name is required; the zero Profile
// means none.
type Profile struct {
	Name    string `json:"name"`              // 1..MaxProfileName bytes of UTF-8, no control characters
	Avatar  string `json:"avatar,omitempty"`  // "" or an https URL of at most MaxAvatarLen bytes
	Country string `json:"country,omitempty"` // "" or an ISO 3166-1 alpha-2 code, upper case
}

// Limits of a profile.
const (
	MaxProfileName = 64
	MaxAvatarLen   = 512
)

// Normalize checks p, naming the field, and upper-cases its country.
func (p Profile) Normalize() (Profile, error) { return p.normalize() }

func (p Profile) normalize() (Profile, error) {
	switch {
	case p.Name == "" || len(p.Name) > MaxProfileName:
		return p, errorf(ErrBadRequest, "name: %d bytes, want 1..%d", len(p.Name), MaxProfileName)
	case !utf8.ValidString(p.Name) || hasControl(p.Name):
		return p, errorf(ErrBadRequest, "name: invalid UTF-8 or a control character")
	case len(p.Avatar) > MaxAvatarLen:
		return p, errorf(ErrBadRequest, "avatar: %d bytes, at most %d", len(p.Avatar), MaxAvatarLen)
	}
	if p.Avatar != "" {
		u, err := url.Parse(p.Avatar)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || !utf8.ValidString(p.Avatar) || hasControl(p.Avatar) {
			return p, errorf(ErrBadRequest, "avatar: %q is not an https URL", Clip(p.Avatar))
		}
	}
	if p.Country != "" {
		c := strings.ToUpper(p.Country)
		if len(c) != 2 || !strings.Contains(countryCodes, " "+c+" ") {
			return p, errorf(ErrBadRequest, "country: %q is not an ISO 3166-1 alpha-2 code", Clip(p.Country))
		}
		p.Country = c
	}
	return p, nil
}

// countryCodes lists the officially assigned ISO 3166-1 alpha-2 codes,
// each between spaces.
const countryCodes = " AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS" +
	" BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES" +
	" ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM" +
	" IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME" +
	" MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG" +
	" PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY" +
	" SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM" +
	" ZW "

// applyProfile sets ev.Member's profile (interning the member where new)
// and touches every open board-window that ranks it.
func (s *State) applyProfile(seq uint64, ev *Event) error {
	if ev.Profile == nil {
		return errorf(ErrInternal, "profile missing")
	}
	p, err := ev.Profile.normalize()
	if err != nil {
		return err
	}
	if err := s.checkMemberReach(ev.Member, ev.Reach, "setting its profile"); err != nil {
		return err
	}
	if err := s.checkProfileLimit(ev.Member, ev.MaxProfiles); err != nil {
		return err
	}
	h, ok := s.intern(ev.Member)
	if !ok {
		return errorf(ErrLimit, "member: the tenant holds too many member ids")
	}
	if s.profiles == nil {
		s.profiles = map[uint32]Profile{}
	}
	if s.profiles[h] == p && ev.Sealed == nil {
		return nil // no change: no new seq either (a sealed one always counts: profile_erase.go)
	}
	s.freezeProfile(h, ev.At)
	s.profiles[h] = p
	for name, bs := range s.boards { // any order: each window's seq is its own
		if !bs.ended(ev.At) {
			s.touch(name, bs, h)
		}
	}
	return nil
}

// touch records that member h's rows on board name show something new
// (a profile, a review marker) without a change of its entries: each
// window ranking it gets a new seq and a change at its own rank, so that
// live views showing the member send its row again. O(windows × log N).
func (s *State) touch(name string, bs *boardState, h uint32) {
	for _, w := range bs.windows { // any order: each window's seq is its own
		if row, ok := w.b.Get(h); ok {
			w.seq++
			s.feed.note(name, w, board.Change{Member: h, OldRank: row.Rank, NewRank: row.Rank,
				Old: row.Entry, New: row.Entry, Applied: true})
		}
	}
}

// freezeProfile records member h's current profile (zero: none) on every
// board that has ended by at, ranks h, and has not recorded h's yet: the
// profile at the board's end, since nothing changed it between the end and
// now. Called before h's profile changes. O(boards × windows × log N).
func (s *State) freezeProfile(h uint32, at int64) {
	for _, bs := range s.boards { // any order: each board's record is its own
		if _, done := bs.final[h]; done || !bs.ended(at) || !bs.ranks(h) {
			continue
		}
		if bs.final == nil {
			bs.final = map[uint32]Profile{}
		}
		bs.final[h] = s.profiles[h]
	}
}

// ranks reports whether member h has an entry in any window of bs.
func (bs *boardState) ranks(h uint32) bool {
	for _, w := range bs.windows {
		if _, ok := w.b.Get(h); ok {
			return true
		}
	}
	return false
}

// profileOf is member h's profile as a board shows it: the one recorded at
// the board's end where there is one (final), else the current one.
func profileOf(final, profiles map[uint32]Profile, h uint32) Profile {
	if p, ok := final[h]; ok {
		return p
	}
	return profiles[h]
}

// mergeProfile moves the profile of a member merged away (from) to the one
// it was merged into, unless that one has its own.
func (s *State) mergeProfile(into, from uint32) {
	p, ok := s.profiles[from]
	if !ok {
		return
	}
	delete(s.profiles, from)
	if _, has := s.profiles[into]; !has {
		s.profiles[into] = p
	}
}

// Profile returns member's profile (an id or alias), or false where it
// has none. O(1). Read lock.
func (s *State) Profile(member string) (Profile, bool) {
	h, ok := s.ix.Resolve(member)
	if !ok {
		return Profile{}, false
	}
	p, ok := s.profiles[h]
	return p, ok
}
