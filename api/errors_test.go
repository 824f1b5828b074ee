package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// TestErrorMessages: what a client reads for each kind of bad body, query
// and path, through the real handler: the JSON path with indexes, then
// what is wrong, never a Go type or encoding/json's words.
func TestErrorMessages(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b1", tok, `{}`)
	batch7 := `{"scores":[` + strings.Repeat(`{"member":"m","score":1},`, 7) + `{"member":"m","score":"7"}]}`
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"item type names index", "POST", "/v1/boards/b1/scores", batch7, 400, "scores[7].score: want a number, got string"},
		{"body an array", "POST", "/v1/boards/b1/scores", `[{"member":"m","score":1}]`, 400, "body: want an object, got array"},
		{"unknown field in item", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a","score":1},{"member":"b","score":1},{"member":"c","score":1,"foo":1}]}`, 400, "scores[2].foo: unknown field"},
		{"member not a string", "POST", "/v1/boards/b1/scores", `{"member":7,"score":1}`, 400, "member: want a string, got number"},
		{"syntax error", "POST", "/v1/boards/b1/scores", `{"member":"a",}`, 400, `body: invalid JSON at byte 14: want a field name in ""`},
		{"truncated", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a"`, 400, "scores[0]: invalid JSON at byte 24: the body ends early"},
		{"repeated field", "POST", "/v1/boards/b1/scores", `{"member":"a","score":1,"score":2}`, 400, "score: field repeats"},
		{"field case", "POST", "/v1/boards/b1/scores", `{"Member":"a","score":1}`, 400, "Member: unknown field"},
		{"score overflow in batch", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a","score":1},{"member":"b","score":-1e400}]}`, 400, "scores[1].score: want a finite number"},
		{"missing score in batch", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a","score":1},{"member":"b"}]}`, 400, "scores[1].score: required, a finite number"},
		{"control char in batch", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a\u0001","score":1}]}`, 400, "scores[0].member: holds a control character"},
		{"settings type", "PUT", "/v1/boards/b2", `{"windows":"all"}`, 400, "windows: want an array, got string"},
		{"settings item type", "PUT", "/v1/boards/b2", `{"windows":["all",7]}`, 400, "windows[1]: want a string, got number"},
		{"settings integer", "PUT", "/v1/boards/b2", `{"retention":2.5}`, 400, "retention: want an integer"},
		{"settings bad window", "PUT", "/v1/boards/b2", `{"windows":["all","year"]}`, 400, `windows[1]: "year" is not one of all, day, week, month`},
		{"settings bad order", "PUT", "/v1/boards/b2", `{"order":"up"}`, 400, `order: "up" is neither "desc" nor "asc"`},
		{"settings unknown", "PUT", "/v1/boards/b2", `{"ordre":"asc"}`, 400, "ordre: unknown field"},
		{"link alias type", "POST", "/v1/identities", `{"member":"m","aliases":["a",{}]}`, 400, "aliases[1]: want a string, got object"},
		{"link empty alias", "POST", "/v1/identities", `{"member":"m","aliases":["a",""]}`, 400, "aliases[1]: empty"},
		{"link body null", "POST", "/v1/identities", `null`, 400, "body: want an object, got null"},
		{"not found board", "GET", "/v1/boards/nope/top", "", 404, `board "nope"`},
		{"method", "PATCH", "/v1/boards/b1", "{}", 405, `method: "PATCH" is not one this route takes`},
		{"ids control char", "GET", "/v1/boards/b1/members?ids=a,%07", "", 400, "ids[1]: holds a control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := e.do(tt.method, tt.path, tok, tt.body)
			code, msg := errCode(out)
			if status != tt.status || msg != tt.want || code == "" {
				t.Errorf("%d %s %q, want %d %q", status, code, msg, tt.status, tt.want)
			}
		})
	}
}

// TestAuthMessages: refusals of a token say what is wrong with it in the
// protocol's words, naming the role or board where one is concerned.
func TestAuthMessages(t *testing.T) {
	e := newEnv(t, Config{})
	e.must(200, "PUT", "/v1/boards/poker", e.token("a", admin), `{}`)
	tests := []struct{ name, method, path, token, want string }{
		{"garbage", "GET", "/v1/boards/poker/top", "garbage", "token: malformed"},
		{"role", "POST", "/v1/boards/poker/scores", e.token("a", auth.RoleRead), "role submit: not granted"},
		{"board", "GET", "/v1/boards/poker/top", e.token("a", auth.RoleRead, "slots-*"), `board "poker": the token does not reach it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out := e.do(tt.method, tt.path, tt.token, `{"member":"a","score":1}`)
			if _, msg := errCode(out); msg != tt.want {
				t.Errorf("message %q, want %q", msg, tt.want)
			}
		})
	}
}

// TestInvalidUTF8: invalid UTF-8 in any string of a body, a query or a
// path is bad_request naming the field; it is never replaced, so two
// different byte strings never become one member.
func TestInvalidUTF8(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/u", tok, `{}`)
	tests := []struct{ name, method, path, body, want string }{
		{"member ff fe", "POST", "/v1/boards/u/scores", "{\"member\":\"bad\xff\xfe\",\"score\":1}", "member: invalid UTF-8"},
		{"member fe ff", "POST", "/v1/boards/u/scores", "{\"member\":\"bad\xfe\xff\",\"score\":1}", "member: invalid UTF-8"},
		{"batch member", "POST", "/v1/boards/u/scores", "{\"scores\":[{\"member\":\"bad\xff\",\"score\":1}]}", "scores[0].member: invalid UTF-8"},
		{"batch id", "POST", "/v1/boards/u/scores", "{\"scores\":[{\"member\":\"a\",\"score\":1},{\"member\":\"b\",\"score\":1,\"id\":\"\xc3(\"}]}", "scores[1].id: invalid UTF-8"},
		{"lone surrogate", "POST", "/v1/boards/u/scores", `{"member":"bad\udcff","score":1}`, "member: invalid UTF-8"},
		{"field name", "POST", "/v1/boards/u/scores", "{\"scores\":[{\"\xff\":1}]}", "scores[0]: invalid UTF-8 in a field name"},
		{"settings window", "PUT", "/v1/boards/u2", "{\"windows\":[\"all\",\"d\xe9y\"]}", "windows[1]: invalid UTF-8"},
		{"settings policy", "PUT", "/v1/boards/u2", "{\"policy\":\"\xff\"}", "policy: invalid UTF-8"},
		{"link member", "POST", "/v1/identities", "{\"member\":\"\xff\",\"aliases\":[\"a\"]}", "member: invalid UTF-8"},
		{"link alias", "POST", "/v1/identities", "{\"member\":\"m\",\"aliases\":[\"a\",\"b\xff\"]}", "aliases[1]: invalid UTF-8"},
		{"path member", "GET", "/v1/boards/u/members/bad%FF%FE", "", "member: invalid UTF-8"},
		{"path member around", "GET", "/v1/boards/u/members/bad%FE%FF/around", "", "member: invalid UTF-8"},
		{"path identity", "GET", "/v1/identities/%FF", "", "id: invalid UTF-8"},
		{"delete member", "DELETE", "/v1/boards/u/members/%C3", "", "member: invalid UTF-8"},
		{"query ids", "GET", "/v1/boards/u/members?ids=a,bad%FF", "", "ids[1]: invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := e.do(tt.method, tt.path, tok, tt.body)
			if code, msg := errCode(out); status != 400 || code != "bad_request" || msg != tt.want {
				t.Errorf("%d %s %q, want 400 bad_request %q", status, code, msg, tt.want)
			}
		})
	}
	for _, q := range []string{"window=%FF", "at=%FF", "limit=%FF"} {
		status, out := e.do("GET", "/v1/boards/u/top?"+q, tok, "")
		field, _, _ := strings.Cut(q, "=")
		if code, msg := errCode(out); status != 400 || code != "bad_request" || !strings.HasPrefix(msg, field+": ") {
			t.Errorf("?%s: %d %s %q, want 400 naming %s", q, status, code, msg, field)
		}
	}
	if top := e.must(200, "GET", "/v1/boards/u/top", tok, ""); top["total"] != 0.0 {
		t.Errorf("a refused submission reached the board: %v", top)
	}
}

// TestToError: each class of error maps to its code and status, a hub
// error answers its own message, an unknown error is internal without
// detail.
func TestToError(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
	}{
		{"closed", hub.ErrClosed, 503, "unavailable", "closed"},
		{"store full", fmt.Errorf("submit: %w", hub.ErrStoreFull), 503, "unavailable", "the store is full; writes resume once space is freed"},
		{"board limit", hub.ErrLimit, 429, "rate_limited", "limit"},
		{"hub forbidden the older way", fmt.Errorf("%w: alias \"x\"", hub.ErrForbidden), 403, "forbidden", "forbidden"},
		{"wrapped hub error", fmt.Errorf("ctx: %w", hub.ErrConflict), 409, "conflict", "conflict"},
		{"too large", &http.MaxBytesError{Limit: 10}, 413, "too_large", "body: larger than 10 bytes"},
		{"expired", fmt.Errorf("%w: exp is 2m past", auth.ErrExpired), 401, "unauthorized", "token: expired"},
		{"unknown key", fmt.Errorf("%w: kid \"x\"", auth.ErrUnknownKey), 401, "unauthorized", "token: kid names no key of the gateway"},
		{"board", fmt.Errorf("%w: board \"poker\"", auth.ErrBoard), 403, "forbidden", "token: does not reach the board"},
		{"auth class", auth.ErrForbidden, 403, "forbidden", "token: not allowed"},
		{"hub internal", hub.ErrInternal, 500, "internal", "internal error"},
		{"unknown", errors.New("disk on fire at /var/x"), 500, "internal", "internal error"},
		{"client gone", fmt.Errorf("submit: %w", context.Canceled), 503, "unavailable", "the request was cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toError(tt.err, log)
			if got.Status != tt.status || got.Code != tt.code || got.Message != tt.msg {
				t.Errorf("toError = %+v, want %d %s %q", got, tt.status, tt.code, tt.msg)
			}
		})
	}
}

// goText matches what a client must never read in a message: a Go package
// or type, encoding/json's prefix, a pointer star.
var goText = regexp.MustCompile(`api\.|hub\.|jsonbody\.|\bjson:|main\.|\*|struct|float64|\bint\b|RW_`)

// quotedText matches what a message quotes of what the client sent.
var quotedText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// leadsWithField matches a message that starts with "body" or a JSON path.
var leadsWithField = regexp.MustCompile(`^(body|[A-Za-z0-9_-]+)(\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\]|\.[A-Za-z0-9_-]+)*: `)

// bodyTarget is a real gateway for fuzzing one body-taking endpoint.
type bodyTarget struct {
	url, token, method string
	ok                 []int // statuses of accepted bodies
}

func newBodyTarget(f *testing.F, method, path string, ok ...int) *bodyTarget {
	keys, h := startTestHub(f, ``, hub.Config{})
	srv := httptest.NewServer(New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Keys: keys, MaxBody: 1 << 14}))
	f.Cleanup(srv.Close)
	key, _ := keys.SigningKey("a1")
	tok, err := auth.Mint(key, auth.Claims{Tenant: "casino-a", Subject: "p1", Roles: admin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		f.Fatal(err)
	}
	put, _ := http.NewRequest("PUT", srv.URL+"/v1/boards/fz", nil)
	put.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := http.DefaultClient.Do(put); err != nil || resp.StatusCode != 200 {
		f.Fatalf("PUT board: %v %v", resp, err)
	}
	return &bodyTarget{url: srv.URL + path, token: tok, method: method, ok: ok}
}

// check sends body and holds the answer to the rules: an accepted status,
// or bad_request/too_large naming a field, never Go text, never a 5xx.
func (b *bodyTarget) check(t *testing.T, body []byte) {
	req, _ := http.NewRequest(b.method, b.url, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, s := range b.ok {
		if resp.StatusCode == s {
			return
		}
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%q: status %d, body not JSON: %q", body, resp.StatusCode, raw)
	}
	code, msg := errCode(out)
	switch {
	case !(resp.StatusCode == 400 && code == "bad_request" || resp.StatusCode == 413 && code == "too_large"):
		t.Fatalf("%q: %d %s %q", body, resp.StatusCode, code, msg)
	case !leadsWithField.MatchString(msg):
		t.Fatalf("%q: message %q does not start with a field", body, msg)
	case goText.MatchString(quotedText.ReplaceAllString(msg, `""`)):
		t.Fatalf("%q: message %q names Go text", body, msg)
	}
}

func fuzzBodies(f *testing.F, b *bodyTarget, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(b.check)
}

// FuzzSubmitBody: POST /v1/boards/{board}/scores, single and batch.
func FuzzSubmitBody(f *testing.F) {
	fuzzBodies(f, newBodyTarget(f, "POST", "/v1/boards/fz/scores", 200),
		`{"member":"a","score":1}`, `{"scores":[{"member":"a","score":1,"subscore":2,"id":"x"}]}`,
		`{"scores":[{"member":"a","score":"1"}]}`, "{\"member\":\"\xff\",\"score\":1}", `[]`, `{"scores":{}}`)
}

// FuzzSettingsBody: PUT /v1/boards/{board}.
func FuzzSettingsBody(f *testing.F) {
	fuzzBodies(f, newBodyTarget(f, "PUT", "/v1/boards/fz", 200, 409),
		`{"order":"asc","policy":"sum","windows":["all","day"],"retention":3}`, `{"windows":["all",1]}`,
		`{"retention":1e99}`, `{"tiebreak":"\ud800"}`,
		`{"rules":{"min_score":0,"max_score":1000,"max_step":50,"max_per_minute":60}}`, `{"rules":{"max_step":-1}}`,
		`{"rules":{"min_score":"0"}}`, `{"rules":[]}`, `{"rules":{"max_per_minute":1.5}}`)
}

// FuzzProfileBody: PUT /v1/members/{member}/profile.
func FuzzProfileBody(f *testing.F) {
	fuzzBodies(f, newBodyTarget(f, "PUT", "/v1/members/p1/profile", 200),
		`{"name":"GoldenAce","avatar":"https://cdn.example/a.png","country":"MT"}`, `{"name":""}`,
		`{"name":"a","avatar":"https://\u0000"}`, `{"name":"a","country":"m"}`, "{\"name\":\"\xff\"}")
}

// FuzzIdentityBody: POST /v1/identities.
func FuzzIdentityBody(f *testing.F) {
	fuzzBodies(f, newBodyTarget(f, "POST", "/v1/identities", 200),
		`{"member":"m","aliases":["a","b"]}`, `{"member":"m","aliases":[1]}`, `{"member":"m","aliases":"a"}`,
		"{\"member\":\"m\",\"aliases\":[\"\xfe\"]}")
}

// TestPathEscapes: a member in the path reads the same however the client
// percent-encodes it (Go's router hands over the escaped form when the
// escaping is not Go's own), and invalid UTF-8 is refused in every spelling.
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
	for _, p := range []string{"bad%ff%fe", "bad%FF%FE", "caf%c3"} {
		status, out := e.do("GET", "/v1/boards/b1/members/"+p+"/around", tok, "")
		if code, msg := errCode(out); status != 400 || msg != "member: invalid UTF-8" {
			t.Errorf("%s: %d %s %q, want 400 member: invalid UTF-8", p, status, code, msg)
		}
	}
	if status, _ := e.do("DELETE", "/v1/boards/b1/members/caf%c3%a9", tok, ""); status != 200 {
		t.Errorf("DELETE caf%%c3%%a9: %d, want 200 (the member café)", status)
	}
}

// TestDetailLogBounded: a flood of unavailable answers writes at most
// detailLines log lines a second, saying how many it dropped, and the
// cause (a stream name) reaches the log, never the client.
func TestDetailLogBounded(t *testing.T) {
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	details.reset()
	err := &hub.Error{Code: hub.CodeUnavailable, Msg: "the tenant's log is unavailable", Cause: errors.New("publish to RW_x: timeout")}
	start := time.Now().Unix()
	for range 1000 {
		if e := toError(err, log); strings.Contains(e.Message, "RW_") {
			t.Fatalf("the client reads %q", e.Message)
		}
	}
	seconds := time.Now().Unix() - start + 1
	lines := strings.Count(logged.String(), "msg=unavailable")
	if lines < 1 || int64(lines) > seconds*detailLines || !strings.Contains(logged.String(), "RW_x") {
		t.Fatalf("%d lines in %d s for 1000 refusals, want 1..%d naming the stream", lines, seconds, seconds*detailLines)
	}
	details.mu.Lock()
	dropped := details.dropped
	details.mu.Unlock()
	if seconds == 1 && (lines != detailLines || dropped != 1000-detailLines) {
		t.Fatalf("%d lines and %d dropped in one second, want %d and %d", lines, dropped, detailLines, 1000-detailLines)
	}
}
