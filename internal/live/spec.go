package live

import (
	"errors"
	"reflect"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/internal/effects"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// Bounds of live views the protocol leaves to the gateway (wire holds the
// rest: wire.MaxViewLimit, wire.MaxViewRadius, wire.MaxViewMembers,
// wire.MaxSubID).
const (
	maxOffset  = 1 << 30 // view.offset
	maxRankArg = 1 << 31 // view.rank
)

// subscription validates a subscribe message for sc: the board-window it
// addresses and the view's spec.
func subscription(m clientMsg, sc auth.Scope) (hub.Loc, subscriptions.Spec, error) {
	if m.ID == "" || len(m.ID) > wire.MaxSubID {
		return hub.Loc{}, subscriptions.Spec{}, badRequest("id: required, 1 to %d bytes", wire.MaxSubID)
	}
	l, err := liveLoc(m, sc)
	if err != nil {
		return l, subscriptions.Spec{}, err
	}
	if err := followable(m); err != nil {
		return l, subscriptions.Spec{}, err
	}
	// wire.View is a value: an absent view, null and {} all decode to the
	// zero View, which names no kind.
	if reflect.ValueOf(m.View).IsZero() {
		return l, subscriptions.Spec{}, badRequest("view: required")
	}
	spec, err := viewSpec(m.View, sc)
	return l, spec, err
}

// liveLoc returns the board-window m addresses, if the table of effects'
// subscribe row allows sc on its board (role read, the board's reach).
func liveLoc(m clientMsg, sc auth.Scope) (hub.Loc, error) {
	if !names.Valid(m.Board) {
		return hub.Loc{}, badRequest("board: %q does not match %s", truncate(m.Board), names.Pattern)
	}
	switch err := effects.AllowMessage(wire.TypeSubscribe, sc, m.Board); {
	case errors.Is(err, auth.ErrRole):
		return hub.Loc{}, forbidden("token: role read not granted")
	case errors.Is(err, auth.ErrBoard):
		return hub.Loc{}, forbidden("board: %q is not among the token's boards", m.Board)
	case err != nil:
		return hub.Loc{}, &Error{wire.CodeInternal, "subscribe: " + err.Error()}
	}
	l := hub.Loc{Tenant: sc.Tenant, Board: m.Board}
	switch m.Window {
	case "", "all", "day", "week", "month":
		l.Window = m.Window
	default:
		return l, badRequest("window: %q is not one of all, day, week, month", truncate(m.Window))
	}
	if m.At != "" {
		if _, err := time.Parse(time.DateOnly, m.At); err != nil {
			return l, badRequest("at: %q is not a date YYYY-MM-DD", truncate(m.At))
		}
		l.Date = m.At // a date of the board's calendar: the hub finds its window
	}
	return l, nil
}

// followable refuses follow where nothing turns over: the all window, or
// a past window (at).
func followable(m clientMsg) error {
	switch {
	case !m.Follow:
		return nil
	case m.At != "":
		return badRequest("follow: not with at (a past window never turns over)")
	case m.Window == "" || m.Window == "all":
		return badRequest("follow: the all window never turns over: follow a day, week or month window")
	}
	return nil
}

// viewSpec checks a view against PROTOCOL.md's limits.
func viewSpec(v wire.View, sc auth.Scope) (subscriptions.Spec, error) {
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

func topSpec(s subscriptions.Spec, v wire.View) (subscriptions.Spec, error) {
	s.Limit, s.Offset = wire.DefaultViewLimit, v.Offset
	if v.Limit != nil {
		s.Limit = *v.Limit
	}
	if err := bounded("view.limit", s.Limit, 1, wire.MaxViewLimit); err != nil {
		return s, err
	}
	return s, bounded("view.offset", s.Offset, 0, maxOffset)
}

func aroundSpec(s subscriptions.Spec, v wire.View, sc auth.Scope) (subscriptions.Spec, error) {
	s.Member, s.Radius = v.Member, wire.DefaultViewRadius
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
	return s, bounded("view.radius", s.Radius, 0, wire.MaxViewRadius)
}

func membersSpec(s subscriptions.Spec, v wire.View) (subscriptions.Spec, error) {
	if len(v.Members) == 0 || len(v.Members) > wire.MaxViewMembers {
		return s, badRequest("view.members: %d ids, want 1 to %d", len(v.Members), wire.MaxViewMembers)
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
