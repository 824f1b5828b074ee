package ledger

import (
	"slices"

	"github.com/rankwire/rankwire/internal/names"
)

// Reach. A token may be limited to boards (its boards claim, glob
// patterns). An effect on one board is checked at the edge against that
// board. An effect on a member (its profile, its aliases) touches every
// board that ranks the member, and which boards those are is only known in
// stream order: the event carries the token's patterns (Event.Reach) and
// apply decides, identically on every node and replay, as it does for
// merges (Event.NoMerge).

// Reach is the board reach of the token that caused an event. The zero
// Reach (old events, internal callers) reaches every board.
type Reach struct {
	// Scoped says Boards applies; false means every board.
	Scoped bool `json:"s,omitempty"`
	// Boards are the token's glob patterns (names.MatchGlob). Empty while
	// Scoped means no board.
	Boards []string `json:"b,omitempty"`
}

// Reaches reports whether r reaches board name. O(total pattern length).
func (r *Reach) Reaches(name string) bool {
	if r == nil || !r.Scoped {
		return true
	}
	return slices.ContainsFunc(r.Boards, func(p string) bool { return names.MatchGlob(p, name) })
}

// RanksOn returns the boards, sorted, where member h has an entry in any
// window, ended boards included. O(boards × windows × log N).
func (s *State) ranksOn(h uint32) []string {
	var out []string
	for name, bs := range s.boards {
		if bs.ranks(h) {
			out = append(out, name)
		}
	}
	slices.Sort(out) // the first one out of reach is named: the same on every node
	return out
}

// checkMemberReach fails with ErrForbidden, naming the board, where member
// (an id or alias) ranks on a board r does not reach: writing the member's
// profile or identity shows on every board that ranks it. A member that is
// not known yet ranks nowhere. what names the effect for the message.
func (s *State) checkMemberReach(member string, r *Reach, what string) error {
	if r == nil || !r.Scoped {
		return nil
	}
	h, ok := s.ix.Resolve(member)
	if !ok {
		return nil
	}
	for _, name := range s.ranksOn(h) {
		if !r.Reaches(name) {
			return errorf(ErrForbidden, "token does not reach board %q, where member %q ranks; %s needs a token that reaches every board where the member ranks",
				name, Clip(member), what)
		}
	}
	return nil
}

// MemberReachable reports whether member (an id or alias) ranks on at
// least one board r reaches, or r reaches every board: what reading its
// profile or identity needs. A member known nowhere is reachable only by
// an unscoped token. Read lock.
func (s *State) MemberReachable(member string, r Reach) bool {
	if !r.Scoped {
		return true
	}
	h, ok := s.ix.Resolve(member)
	if !ok {
		return false
	}
	return slices.ContainsFunc(s.ranksOn(h), r.Reaches)
}
