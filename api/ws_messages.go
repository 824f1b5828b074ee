package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/subscriptions"
)

// Bounds of live views, from PROTOCOL.md.
const (
	MaxViewLimit  = 100 // rows of a top view
	MaxViewRadius = 50  // rows each side of an around view
	maxSubIDLen   = 128 // bytes of a subscription id
	maxWSMessage  = 64 << 10
)

// clientMsg is any message a client sends; Type says which fields count.
type clientMsg struct {
	Type   string   `json:"type"`
	ID     string   `json:"id"`
	Board  string   `json:"board"`
	Window string   `json:"window"`
	At     string   `json:"at"`
	View   *viewMsg `json:"view"`
	Since  *uint64  `json:"since"`
	Token  string   `json:"token"`
}

type viewMsg struct {
	Kind    string   `json:"kind"`
	Limit   *int     `json:"limit"`
	Offset  int      `json:"offset"`
	Member  string   `json:"member"`
	Radius  *int     `json:"radius"`
	Rank    int      `json:"rank"`
	Members []string `json:"members"`
}

// errorMsg is the server's error message.
type errorMsg struct {
	Type    string  `json:"type"`
	ID      *string `json:"id"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
}

func encodeError(id string, e *Error) []byte {
	m := errorMsg{Type: "error", Code: e.Code, Message: e.Message}
	if id != "" {
		m.ID = &id
	}
	b, _ := json.Marshal(m) // strings only: cannot fail
	return b
}

// decodeMsg parses one client message, naming the field that was wrong.
func decodeMsg(data []byte) (clientMsg, error) {
	var m clientMsg
	err := json.Unmarshal(data, &m)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return m, badRequest("%s: want a JSON %s", typeErr.Field, typeErr.Type)
	case err != nil:
		return m, badRequest("message: not a JSON object: %v", err)
	}
	return m, nil
}

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

func liveLoc(m clientMsg, sc auth.Scope) (hub.Loc, error) {
	if !boardName.MatchString(m.Board) {
		return hub.Loc{}, badRequest("board: %q does not match %s", truncate(m.Board), boardName)
	}
	if err := sc.Allows(auth.RoleRead, m.Board); err != nil {
		return hub.Loc{}, err
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
	if len(v.Members) == 0 || len(v.Members) > MaxIDs {
		return s, badRequest("view.members: %d ids, want 1 to %d", len(v.Members), MaxIDs)
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

// wsCode is a WebSocket close code with its reason; it implements error.
type closeError struct {
	code   int
	reason string
}

func (e closeError) Error() string { return fmt.Sprintf("websocket close %d: %s", e.code, e.reason) }

// Close codes of PROTOCOL.md.
const (
	closeGoingAway = 1001
	closeExpired   = 4001 // the token expired, or none came in time
	closeForbidden = 4003 // a token that may not connect
	closeSlow      = 4008 // too slow, or over its limits
)

// tokenClose maps a refused token to its close code: 4001 where it expired,
// 4003 otherwise.
func tokenClose(err error) closeError {
	if errors.Is(err, auth.ErrExpired) {
		return closeError{closeExpired, "token expired"}
	}
	return closeError{closeForbidden, cleanReason(err)}
}

// cleanReason keeps a close reason within the 123 bytes a close frame holds.
func cleanReason(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
