package api

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// TestErrorMessages: the exact message of each refusal, through the real
// handler: JSON paths with indexes, invalid UTF-8 refused naming the field,
// no Go type or internal name.
func TestErrorMessages(t *testing.T) {
	e := newEnv(t, Config{MaxBody: 4096})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b1", tok, `{}`)
	tests := []struct {
		name, method, path, body string
		status                   int
		code, msg                string
	}{
		{"array body", "POST", "/v1/boards/b1/scores", `[{"member":"a","score":1}]`,
			400, "bad_request", "body: want an object, got array"},
		{"type in a batch item keeps its index", "POST", "/v1/boards/b1/scores",
			`{"scores":[{"member":"a","score":1},{"member":"b","score":2},{"member":"c","score":3},{"member":"d","score":4},{"member":"e","score":5},{"member":"f","score":6},{"member":"g","score":7},{"member":"h","score":"8"}]}`,
			400, "bad_request", "scores[7].score: want a number, got string"},
		{"unknown field in a batch item", "POST", "/v1/boards/b1/scores",
			`{"scores":[{"member":"a","score":1},{"member":"b","score":1},{"member":"c","score":1,"foo":1}]}`,
			400, "bad_request", "scores[2].foo: unknown field"},
		{"invalid UTF-8 member", "POST", "/v1/boards/b1/scores", "{\"scores\":[{\"member\":\"bad\xff\xfe\",\"score\":1}]}",
			400, "bad_request", "scores[0].member: invalid UTF-8"},
		{"invalid UTF-8, other order", "POST", "/v1/boards/b1/scores", "{\"member\":\"bad\xfe\xff\",\"score\":1}",
			400, "bad_request", "member: invalid UTF-8"},
		{"invalid UTF-8 id", "POST", "/v1/boards/b1/scores", "{\"member\":\"a\",\"score\":1,\"id\":\"\xc3\"}",
			400, "bad_request", "id: invalid UTF-8"},
		{"lone surrogate escape", "POST", "/v1/boards/b1/scores", `{"member":"bad\udcff","score":1}`,
			400, "bad_request", "member: invalid UTF-8 (a lone surrogate escape)"},
		{"invalid UTF-8 key", "POST", "/v1/boards/b1/scores", "{\"mem\xffber\":\"a\",\"score\":1}",
			400, "bad_request", "body: invalid UTF-8 in a key"},
		{"repeated field", "POST", "/v1/boards/b1/scores", `{"member":"a","member":"b","score":1}`,
			400, "bad_request", "member: appears more than once"},
		{"syntax error gives a byte offset", "POST", "/v1/boards/b1/scores", `{"member":"a",,}`,
			400, "bad_request", "body: invalid JSON at byte 15"},
		{"truncated", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a"`,
			400, "bad_request", "body: truncated JSON at byte 24, in scores[0]"},
		{"trailing data", "POST", "/v1/boards/b1/scores", `{"member":"a","score":1} {}`,
			400, "bad_request", "body: data after the JSON value at byte 26"},
		{"empty body", "POST", "/v1/boards/b1/scores", "",
			400, "bad_request", "body: empty, want an object"},
		{"missing score in item", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a","score":1},{"member":"b"}]}`,
			400, "bad_request", "scores[1].score: required, a finite number"},
		{"control character member", "POST", "/v1/boards/b1/scores", `{"member":"a\u0007","score":1}`,
			400, "bad_request", `member: identifier is not valid UTF-8 or holds a control character: "a\a"`},
		{"settings wrong type", "PUT", "/v1/boards/b2", `{"windows":"all"}`,
			400, "bad_request", "windows: want an array, got string"},
		{"settings invalid UTF-8 window", "PUT", "/v1/boards/b2", "{\"windows\":[\"all\",\"d\xffy\"]}",
			400, "bad_request", "windows[1]: invalid UTF-8"},
		{"settings retention fraction", "PUT", "/v1/boards/b2", `{"retention":1.5}`,
			400, "bad_request", "retention: want an integer in -9223372036854775808..9223372036854775807, got 1.5"},
		{"settings bad order", "PUT", "/v1/boards/b2", `{"order":"up"}`,
			400, "bad_request", `order: "up" is neither desc nor asc`},
		{"settings bad window", "PUT", "/v1/boards/b2", `{"windows":["all","year"]}`,
			400, "bad_request", `windows[1]: "year" is not one of all, day, week, month`},
		{"link alias invalid UTF-8", "POST", "/v1/identities", "{\"member\":\"m\",\"aliases\":[\"ok\",\"x\xff\"]}",
			400, "bad_request", "aliases[1]: invalid UTF-8"},
		{"link aliases wrong type", "POST", "/v1/identities", `{"member":"m","aliases":[1]}`,
			400, "bad_request", "aliases[0]: want a string, got number"},
		{"link empty alias", "POST", "/v1/identities", `{"member":"m","aliases":[""]}`,
			400, "bad_request", "aliases[0]: empty identifier"},
		{"query invalid UTF-8", "GET", "/v1/boards/b1/top?window=%ff", "",
			400, "bad_request", "window: invalid UTF-8"},
		{"unknown query parameter invalid UTF-8", "GET", "/v1/boards/b1/top?x=%c3", "",
			400, "bad_request", "x: invalid UTF-8"},
		{"path member invalid UTF-8", "GET", "/v1/boards/b1/members/a%ff", "",
			400, "bad_request", `member: identifier is not valid UTF-8 or holds a control character: "a\xff"`},
		{"unknown board", "GET", "/v1/boards/nope/top", "",
			404, "not_found", `board: no board "nope"`},
		{"unknown member", "GET", "/v1/boards/b1/members/ghost/around", "",
			404, "not_found", `member: "ghost" is not on the board`},
		{"body too large", "POST", "/v1/boards/b1/scores", `{"member":"` + strings.Repeat("x", 5000) + `","score":1}`,
			413, "too_large", "body: larger than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := e.do(tt.method, tt.path, tok, tt.body)
			code, msg := errCode(out)
			if status != tt.status || code != tt.code || msg != tt.msg {
				t.Errorf("%d %s %q\nwant %d %s %q", status, code, msg, tt.status, tt.code, tt.msg)
			}
			if goTypeName.MatchString(msg) && !strings.Contains(tt.name, "control") {
				t.Errorf("%q names a Go type", msg)
			}
		})
	}
	if top := e.must(200, "GET", "/v1/boards/b1/top", tok, ""); top["total"] != 0.0 {
		t.Errorf("a refused request changed the board: %v", top)
	}
}

// TestUTF8NotReplaced: two members that differ only in their invalid bytes
// are both refused; neither lands on the board as a replaced string.
func TestUTF8NotReplaced(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b1", tok, `{}`)
	for _, m := range []string{"bad\xff\xfe", "bad\xfe\xff", `bad\udcff`, `bad\ud800`} {
		status, out := e.do("POST", "/v1/boards/b1/scores", tok, `{"member":"`+m+`","score":1}`)
		if code, msg := errCode(out); status != 400 || code != "bad_request" || !strings.HasPrefix(msg, "member: invalid UTF-8") {
			t.Errorf("member %q: %d %s %q, want 400 bad_request naming member", m, status, code, msg)
		}
	}
	if top := e.must(200, "GET", "/v1/boards/b1/top", tok, ""); top["total"] != 0.0 {
		t.Errorf("an invalid member reached the board: %v", top)
	}
}

// TestHubErrorsToProtocol: hub errors map through errors.As to their code
// and message; a detail naming internals reaches the log, not the client;
// an old-style wrapped sentinel still answers its code.
func TestHubErrorsToProtocol(t *testing.T) {
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	details.reset()
	cause := errors.New("publish to RW_acme: nats: timeout")
	tests := []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{&hub.Error{Code: hub.CodeUnavailable, Msg: "the tenant's log is unavailable", Detail: cause},
			503, "unavailable", "the tenant's log is unavailable"},
		{fmt.Errorf("context: %w", &hub.Error{Code: hub.CodeNotFound, Msg: `board: no board "x"`}),
			404, "not_found", `board: no board "x"`},
		{&hub.Error{Code: hub.CodeConflict, Msg: "order: the board has entries"}, 409, "conflict", "order: the board has entries"},
		{&hub.Error{Code: hub.CodeForbidden, Msg: "aliases[0]: merges"}, 403, "forbidden", "aliases[0]: merges"},
		{&hub.Error{Code: hub.CodeLimit, Msg: "boards: at the limit"}, 429, "rate_limited", "boards: at the limit"},
		{hub.ErrClosed, 503, "unavailable", "the gateway is shutting down"},
		{fmt.Errorf("%w: boards: 10 boards", hub.ErrLimit), 429, "rate_limited", "rate limited"},
		{&hub.Error{Code: "made_up", Msg: "x"}, 500, "internal", "internal error"},
		{io.ErrUnexpectedEOF, 500, "internal", "internal error"},
	}
	for _, tt := range tests {
		got := toError(tt.err, log)
		if got.Status != tt.status || got.Code != tt.code || got.Message != tt.msg {
			t.Errorf("toError(%v) = %d %s %q, want %d %s %q", tt.err, got.Status, got.Code, got.Message, tt.status, tt.code, tt.msg)
		}
		if strings.Contains(got.Message, "RW_") {
			t.Errorf("%q names a stream", got.Message)
		}
	}
	if !strings.Contains(logged.String(), "RW_acme") {
		t.Errorf("the detail did not reach the log: %s", logged.String())
	}
	for _, s := range []*hub.Error{hub.ErrClosed, {Code: hub.CodeUnavailable, Msg: "x", Detail: cause}} {
		if !errors.Is(s, hub.ErrUnavailable) || errors.Is(s, hub.ErrNotFound) {
			t.Errorf("errors.Is on %v does not follow its code", s)
		}
	}
	if !errors.Is(hub.ErrClosed, hub.ErrClosed) || errors.Is(&hub.Error{Code: hub.CodeUnavailable, Msg: "x"}, hub.ErrClosed) {
		t.Error("ErrClosed is not told apart from other unavailable errors")
	}
	if !errors.Is(fmt.Errorf("w: %w", &hub.Error{Code: hub.CodeBadRequest, Msg: "x"}), hub.ErrBadRequest) {
		t.Error("a wrapped bad request does not match ErrBadRequest")
	}
	_ = http.StatusOK
}

// TestDetailLogBounded: a flood of unavailable answers writes at most
// detailLines detail lines a second, and says how many it dropped.
func TestDetailLogBounded(t *testing.T) {
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	details.reset()
	err := &hub.Error{Code: hub.CodeUnavailable, Msg: "the tenant's log is unavailable", Detail: errors.New("publish to RW_x: timeout")}
	start := time.Now().Unix()
	for range 1000 {
		toError(err, log)
	}
	seconds := time.Now().Unix() - start + 1
	lines := strings.Count(logged.String(), "request refused")
	if lines < 1 || int64(lines) > seconds*detailLines {
		t.Fatalf("%d detail lines in %d s for 1000 refusals, want 1..%d", lines, seconds, seconds*detailLines)
	}
	details.mu.Lock()
	dropped := details.dropped
	details.mu.Unlock()
	if seconds == 1 && (lines != detailLines || dropped != 1000-detailLines) {
		t.Fatalf("%d lines and %d dropped in one second, want %d and %d", lines, dropped, detailLines, 1000-detailLines)
	}
}

// TestPathEscapes: a member in the path reads the same however the client
// escapes it, and a path segment that does not unescape is a bad request.
func TestPathEscapes(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b1", tok, `{}`)
	e.must(200, "POST", "/v1/boards/b1/scores", tok, `{"member":"café","score":1}`)
	for _, p := range []string{"caf%C3%A9", "caf%c3%a9", "café"} {
		out := e.must(200, "GET", "/v1/boards/b1/members/"+p+"/around", tok, "")
		if got := members(out); len(got) != 1 || got[0] != "café" {
			t.Errorf("%s: rows %v", p, got)
		}
	}
	status, out := e.do("GET", "/v1/boards/b1/members/caf%c3/around", tok, "")
	if code, msg := errCode(out); status != 400 || !strings.HasPrefix(msg, "member: ") {
		t.Errorf("caf%%c3: %d %s %q", status, code, msg)
	}
}

// TestAuthMessages: token and scope refusals start with what they are
// about, with no package prefix.
func TestAuthMessages(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b1", tok, `{}`)
	tests := []struct {
		name, method, path, token string
		status                    int
		msg                       string
	}{
		{"role", "POST", "/v1/boards/b1/scores", e.token("a", auth.RoleRead), 403, "role: not granted: token lacks role submit"},
		{"board", "GET", "/v1/boards/b1/top", e.token("a", admin, "slots-*"), 403, `board: not granted: token does not reach board "b1"`},
		{"malformed", "GET", "/v1/boards/b1/top", "x.y", 401, "token: malformed: header is not base64url"},
	}
	for _, tt := range tests {
		status, out := e.do(tt.method, tt.path, tt.token, `{"member":"m","score":1}`)
		if _, msg := errCode(out); status != tt.status || msg != tt.msg {
			t.Errorf("%s: %d %q, want %d %q", tt.name, status, msg, tt.status, tt.msg)
		}
	}
}
