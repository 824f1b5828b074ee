package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/internal/names"
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

// decodeMsg parses one client message, naming the field that was wrong
// by its JSON path (view.limit), never by a Go type. data is valid UTF-8
// (the read loop checks it); a string whose escapes decode to an unpaired
// surrogate, which encoding/json would replace with U+FFFD, is refused.
// O(len(data)).
func decodeMsg(data []byte) (clientMsg, error) {
	var m clientMsg
	err := json.Unmarshal(data, &m)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return m, badRequest("%s: want %s", fieldPath(data, typeErr.Field), jsonKind(typeErr.Type))
	case errors.As(err, &syntaxErr):
		return m, badRequest("message: not valid JSON (byte %d)", syntaxErr.Offset)
	case err != nil:
		return m, badRequest("message: not a JSON object")
	}
	return m, replacedText(data, m)
}

// fieldPath names a field for a message: the whole message where the
// field is the top level, and the item's index in view.members (which
// encoding/json does not give).
func fieldPath(data []byte, field string) string {
	switch field {
	case "":
		return "message"
	case "view.members":
		var v struct {
			View struct{ Members []json.RawMessage } `json:"view"`
		}
		_ = json.Unmarshal(data, &v) // decoded once already: an item is not a string
		for i, raw := range v.View.Members {
			if len(raw) == 0 || raw[0] != '"' && string(raw) != "null" { // null leaves a string as it is
				return fmt.Sprintf("view.members[%d]", i)
			}
		}
	}
	return field
}

// jsonKind names what JSON a Go type of clientMsg decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another JSON value"
}

// replacedText refuses a message whose strings hold U+FFFD that data does
// not spell out: encoding/json put it there for an unpaired surrogate
// escape (\ud800). PROTOCOL.md: text is valid UTF-8, never replaced.
func replacedText(data []byte, m clientMsg) error {
	if !bytes.Contains(data, []byte(`\u`)) || bytes.Contains(data, []byte(`\uFFFD`)) ||
		bytes.Contains(data, []byte(`\ufffd`)) || bytes.ContainsRune(data, utf8.RuneError) {
		return nil // no escape, or U+FFFD spelled out: kept as sent
	}
	fields := []textField{{"type", m.Type}, {"id", m.ID}, {"board", m.Board}, {"window", m.Window}, {"at", m.At}, {"token", m.Token}}
	if m.View != nil {
		fields = append(fields, textField{"view.kind", m.View.Kind}, textField{"view.member", m.View.Member})
		for i, id := range m.View.Members {
			fields = append(fields, textField{fmt.Sprintf("view.members[%d]", i), id})
		}
	}
	for _, f := range fields {
		if strings.ContainsRune(f.v, utf8.RuneError) {
			return badRequest("%s: not valid UTF-8 (an unpaired surrogate escape)", f.path)
		}
	}
	return nil
}

// textField is a decoded string of a client message and its JSON path.
type textField struct{ path, v string }

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
