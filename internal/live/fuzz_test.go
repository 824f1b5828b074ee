package live

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rankwire/rankwire/auth"
)

// wsFieldPath is how every refusal of a client message begins: the JSON
// path of the field it names (view.members[3]), or "message" for the whole.
var wsFieldPath = regexp.MustCompile(`^(message|type|id|board|window|at|since|token|view(\.(kind|limit|offset|member|radius|rank|members(\[\d+\])?))?): `)

// quoted is a Go-quoted string in a message: what the client sent, which
// may hold any word.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// goTypeNames are words that only a Go type or an internal name would put
// in a message.
var goTypeNames = regexp.MustCompile(`api\.|live\.|Msg|JSON int|uint64|\bint\b|struct|\*`)

// checkClientMessage decodes and validates data as the connection does
// (everything but the hub), and fails t where a refusal is not a protocol
// error naming a field, or names a Go type.
func checkClientMessage(t *testing.T, data []byte) {
	if !utf8.Valid(data) {
		return // closed 1007 before decoding: TestWSInvalidUTF8
	}
	sc := auth.Scope{Tenant: "casino-a", Subject: "p1", Roles: auth.RoleRead, Boards: []string{"slots-*"}, Expiry: time.Now().Add(time.Hour)}
	m, err := decodeMsg(data)
	if err == nil && m.Type == "subscribe" {
		_, _, err = subscription(m, sc)
	}
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: refusal %T %v is not a protocol error", data, err, err)
	}
	if e.Code != "bad_request" && e.Code != "forbidden" {
		t.Fatalf("%q: code %q, want bad_request or forbidden", data, e.Code)
	}
	if !wsFieldPath.MatchString(e.Message) {
		t.Fatalf("%q: message %q names no field", data, e.Message)
	}
	if unquoted := quoted.ReplaceAllString(e.Message, `""`); goTypeNames.MatchString(unquoted) {
		t.Fatalf("%q: message %q names a Go type", data, e.Message)
	}
	if !utf8.ValidString(e.Message) {
		t.Fatalf("%q: message %q is not valid UTF-8", data, e.Message)
	}
}

// FuzzClientMessage: no client message panics the decoder or the
// validation of a subscription, and every refusal is bad_request or
// forbidden with a message that starts with the field's JSON path. The
// seeds in testdata/fuzz/FuzzClientMessage run as a normal test.
func FuzzClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"subscribe","id":"s1","board":"slots-1","window":"all","view":{"kind":"top","limit":10,"offset":0}}`,
		`{"type":"subscribe","id":"s2","board":"slots-1","view":{"kind":"around","member":"p42","radius":5}}`,
		`{"type":"subscribe","id":"s4","board":"slots-1","view":{"kind":"members","members":["p1",7]}}`,
		`{"type":"subscribe","id":"s1","board":"slots-1","view":{"kind":"top"},"since":-1}`,
		`{"type":"unsubscribe","id":"s1"}`,
		`{"type":"auth","token":"x.y.z"}`,
		`[]`, `"subscribe"`, `null`, `{`, `{"type":7}`, `{"view":[]}`, `{"view":{"limit":1.5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkClientMessage(t, data) })
}

// TestClientMessageErrors: each malformed message is refused with the
// message the protocol promises: the field's path, what it wants, no Go
// type.
func TestClientMessageErrors(t *testing.T) {
	sub := func(view string) string {
		return `{"type":"subscribe","id":"s","board":"slots-1","view":` + view + `}`
	}
	cases := []struct{ name, msg, want string }{
		{"not JSON", `not json`, "message: not valid JSON (byte 2)"},
		{"an array", `[]`, "message: want a JSON object"},
		{"a string", `"hi"`, "message: want a JSON object"},
		{"type a number", `{"type":7}`, "type: want a string"},
		{"view an array", sub(`[]`), "view: want a JSON object"},
		{"limit a string", sub(`{"kind":"top","limit":"ten"}`), "view.limit: want an integer"},
		{"limit a fraction", sub(`{"kind":"top","limit":1.5}`), "view.limit: want an integer"},
		{"limit too big", sub(`{"kind":"top","limit":101}`), "view.limit: 101 is not in 1..100"},
		{"since negative", `{"type":"subscribe","since":-1}`, "since: want a non-negative integer"},
		{"members not strings", sub(`{"kind":"members","members":["p1",null,7]}`), "view.members[2]: want a string"},
		{"members an object", sub(`{"kind":"members","members":{"a":1}}`), "view.members: want a JSON array"},
		{"member invalid", sub(`{"kind":"members","members":["p1",""]}`), "view.members[1]: "},
		{"surrogate id", `{"type":"subscribe","id":"\udead"}`, "id: not valid UTF-8 (an unpaired surrogate escape)"},
		{"board out of reach", `{"type":"subscribe","id":"s","board":"poker","view":{"kind":"top"}}`, `board: "poker" is not among the token's boards`},
	}
	sc := auth.Scope{Tenant: "casino-a", Roles: auth.RoleRead, Boards: []string{"slots-*"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkClientMessage(t, []byte(c.msg))
			m, err := decodeMsg([]byte(c.msg))
			if err == nil {
				_, _, err = subscription(m, sc)
			}
			if err == nil || !strings.HasPrefix(err.(*Error).Message, c.want) {
				t.Fatalf("%s: %v, want %q", c.msg, err, c.want)
			}
		})
	}
}
