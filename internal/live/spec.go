package live

import (
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/subscriptions"
)

// Bounds of live views, from PROTOCOL.md.
const (
	MaxViewLimit   = 100 // rows of a top view
	MaxViewRadius  = 50  // rows each side of an around view
	MaxViewMembers = 100 // ids of a members view
	maxSubIDLen    = 128 // bytes of a subscription id
	maxWSMessage   = 64 << 10
	maxOffset      = 1 << 30 // view.offset
	maxRankArg     = 1 << 31 // view.rank
)

// subscription validates a subscribe message for sc: the board-window it
// addresses and the view's spec.
func subscription(m clientMsg, sc auth.Scope) (hub.Loc, subscriptions.Spec, error) {
	if m.ID == "" || len(m.ID) > maxSubIDLen {
		return hub.Loc{}, subscriptions.Spec{}, badRequest("id: required, 1 to %d bytes", maxSubIDLen)
	}
	l, err := liveLoc(m, sc)
	if err != nil {
		return l, subscriptions.Spec{}, err
	}
	if m.View == nil {
		return l, subscriptions.Spec{}, badRequest("view: required")
	}
	spec, err := viewSpec(*m.View, sc)
	return l, spec, err
}

// liveLoc returns the board-window m addresses, if sc reaches its board.
// sc has the read role: a connection's token always has.
func liveLoc(m clientMsg, sc auth.Scope) (hub.Loc, error) {
	if !names.Valid(m.Board) {
		return hub.Loc{}, badRequest("board: %q does not match %s", truncate(m.Board), names.Pattern)
	}
	if !sc.CanBoard(m.Board) {
		return hub.Loc{}, forbidden("board: %q is not among the token's boards", m.Board)
	}
	l := hub.Loc{Tenant: sc.Tenant, Board: m.Board}
	switch m.Window {
	case "", "all", "day", "week", "month":
		l.Window = m.Window
	default:
		return l, badRequest("window: %q is not one of all, day, week, month", truncate(m.Window))
	}
	if m.At != "" {
		t, err := time.Parse(time.DateOnly, m.At)
		if err != nil {
			return l, badRequest("at: %q is not a date YYYY-MM-DD", truncate(m.At))
		}
		l.At = t.Add(12 * time.Hour)
	}
	return l, nil
}

// viewSpec checks a view against PROTOCOL.md's limits.
func viewSpec(v viewMsg, sc auth.Scope) (subscriptions.Spec, error) {
	kind, ok := subscriptions.ParseKind(v.Kind)
	if !ok {
		return subscriptions.Spec{}, badRequest("view.kind: %q is not one of top, around, rank, members", truncate(v.Kind))
	}
	s := subscriptions.Spec{Kind: kind}
	switch kind {
	case subscriptions.Top:
		return topSpec(s, v)
	case subscriptions.Around:
		return aroundSpec(s, v, sc)
	case subscriptions.Rank:
		s.Rank = v.Rank
		return s, bounded("view.rank", v.Rank, 1, maxRankArg)
	}
	return membersSpec(s, v)
}

func topSpec(s subscriptions.Spec, v viewMsg) (subscriptions.Spec, error) {
	s.Limit, s.Offset = 10, v.Offset
	if v.Limit != nil {
		s.Limit = *v.Limit
	}
	if err := bounded("view.limit", s.Limit, 1, MaxViewLimit); err != nil {
		return s, err
	}
	return s, bounded("view.offset", s.Offset, 0, maxOffset)
}

func aroundSpec(s subscriptions.Spec, v viewMsg, sc auth.Scope) (subscriptions.Spec, error) {
	s.Member, s.Radius = v.Member, 5
	if s.Member == "" {
		s.Member = sc.Subject
	}
	if s.Member == "" {
		return s, badRequest("view.member: required where the token has no sub")
	}
	if err := identity.Validate(s.Member); err != nil {
		return s, badRequest("view.member: %v", err)
	}
	if v.Radius != nil {
		s.Radius = *v.Radius
	}
	return s, bounded("view.radius", s.Radius, 0, MaxViewRadius)
}

func membersSpec(s subscriptions.Spec, v viewMsg) (subscriptions.Spec, error) {
	if len(v.Members) == 0 || len(v.Members) > MaxViewMembers {
		return s, badRequest("view.members: %d ids, want 1 to %d", len(v.Members), MaxViewMembers)
	}
	for i, id := range v.Members {
		if err := identity.Validate(id); err != nil {
			return s, badRequest("view.members[%d]: %v", i, err)
		}
	}
	s.Members = v.Members
	return s, nil
}

func bounded(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return badRequest("%s: %d is not in %d..%d", name, v, lo, hi)
	}
	return nil
}
