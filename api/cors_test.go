package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/live"
)

// corsEnv is an env whose --allowed-origins is lobby.example. It is not
// spec-checked: OPTIONS, HEAD and 405 are HTTP's, not operations of
// api/spec/openapi.json (docs/PROTOCOL.md says what they answer).
func corsEnv(t *testing.T) *env {
	t.Helper()
	return newRawEnv(t, Config{Live: live.Options{AllowedOrigins: []string{"https://lobby.example"}}})
}

// send sends method path with headers (name, value pairs) and returns
// the answer with its body read.
func (e *env) send(method, path string, headers ...string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func wantHeader(t *testing.T, what string, resp *http.Response, name, want string) {
	t.Helper()
	if got := strings.Join(resp.Header.Values(name), ", "); got != want {
		t.Errorf("%s: %s = %q, want %q", what, name, got, want)
	}
}

func wantErrorBody(t *testing.T, what, body, code string) {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%s: body not JSON: %q", what, body)
	}
	if got, _ := errCode(out); got != code {
		t.Errorf("%s: code %q, want %q (%s)", what, got, code, body)
	}
}

func TestCorsPreflight(t *testing.T) {
	e := corsEnv(t)
	const top = "/v1/boards/daily/top"
	resp, body := e.send("OPTIONS", top, "Origin", "https://lobby.example",
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	if resp.StatusCode != http.StatusNoContent || body != "" {
		t.Fatalf("preflight without a token: %d %q, want 204 and no body", resp.StatusCode, body)
	}
	wantHeader(t, "preflight", resp, "Access-Control-Allow-Origin", "https://lobby.example")
	wantHeader(t, "preflight", resp, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
	wantHeader(t, "preflight", resp, "Access-Control-Allow-Headers", "Authorization, Content-Type")
	wantHeader(t, "preflight", resp, "Access-Control-Max-Age", "600")
	wantHeader(t, "preflight", resp, "Access-Control-Allow-Credentials", "")
	wantHeader(t, "preflight", resp, "Vary", "Origin")

	resp, _ = e.send("OPTIONS", "/v1/boards/daily/scores", "Origin", "https://lobby.example", "Access-Control-Request-Method", "POST")
	wantHeader(t, "preflight of scores", resp, "Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")

	for _, origin := range []string{"https://evil.example", "http://lobby.example", "https://lobby.example:8443", "null"} {
		resp, body = e.send("OPTIONS", top, "Origin", origin, "Access-Control-Request-Method", "GET")
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("preflight from %s: %d, want 403", origin, resp.StatusCode)
		}
		wantErrorBody(t, "preflight from "+origin, body, "forbidden")
		wantHeader(t, "preflight from "+origin, resp, "Access-Control-Allow-Origin", "")
		wantHeader(t, "preflight from "+origin, resp, "Access-Control-Allow-Methods", "")
	}
}

func TestCorsActualRequest(t *testing.T) {
	e := corsEnv(t)
	tok := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/daily", tok, `{}`)
	resp, body := e.send("GET", "/v1/boards/daily/top", "Origin", "https://lobby.example", "Authorization", "Bearer "+tok)
	if resp.StatusCode != 200 || !strings.Contains(body, `"rows"`) {
		t.Fatalf("GET from an allowed origin: %d %s", resp.StatusCode, body)
	}
	wantHeader(t, "allowed", resp, "Access-Control-Allow-Origin", "https://lobby.example")
	wantHeader(t, "allowed", resp, "Access-Control-Expose-Headers", "Retry-After, Content-Type")
	wantHeader(t, "allowed", resp, "Access-Control-Allow-Credentials", "")
	wantHeader(t, "allowed", resp, "Vary", "Origin")

	resp, _ = e.send("GET", "/v1/boards/daily/top", "Origin", "https://evil.example", "Authorization", "Bearer "+tok)
	wantHeader(t, "disallowed", resp, "Access-Control-Allow-Origin", "")
	wantHeader(t, "disallowed", resp, "Access-Control-Expose-Headers", "")

	// A refusal carries the headers too: the page must be able to read why.
	resp, _ = e.send("GET", "/v1/boards/daily/top", "Origin", "https://lobby.example")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %d, want 401", resp.StatusCode)
	}
	wantHeader(t, "401", resp, "Access-Control-Allow-Origin", "https://lobby.example")
}

// Without --allowed-origins, only the gateway's own host gets CORS
// headers: the default opens the REST API to no other site.
func TestCorsDefaultOpensNothing(t *testing.T) {
	e := newRawEnv(t, Config{})
	resp, body := e.send("OPTIONS", "/v1/boards", "Origin", "https://lobby.example", "Access-Control-Request-Method", "GET")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("preflight with no allowed origins: %d %s, want 403", resp.StatusCode, body)
	}
	resp, _ = e.send("GET", "/healthz", "Origin", "https://lobby.example")
	wantHeader(t, "default", resp, "Access-Control-Allow-Origin", "")
}

func TestCorsMethods(t *testing.T) {
	e := corsEnv(t)
	tok := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/daily", tok, `{}`)
	cases := []struct{ path, allow string }{
		{"/healthz", "GET, HEAD, OPTIONS"},
		{"/readyz", "GET, HEAD, OPTIONS"},
		{"/v1/boards/daily/top", "GET, HEAD, OPTIONS"},
		{"/v1/boards/daily", "GET, HEAD, PUT, DELETE, OPTIONS"},
	}
	for _, c := range cases {
		get, getBody := e.send("GET", c.path, "Authorization", "Bearer "+tok)
		head, headBody := e.send("HEAD", c.path, "Authorization", "Bearer "+tok)
		if head.StatusCode != get.StatusCode || get.StatusCode != 200 || headBody != "" {
			t.Errorf("HEAD %s: %d with %d bytes, want GET's %d and no body", c.path, head.StatusCode, len(headBody), get.StatusCode)
		}
		if cl := head.Header.Get("Content-Type"); cl != get.Header.Get("Content-Type") || len(getBody) == 0 {
			t.Errorf("HEAD %s: Content-Type %q, GET's %q", c.path, cl, get.Header.Get("Content-Type"))
		}
		opt, optBody := e.send("OPTIONS", c.path) // no token: OPTIONS needs none
		if opt.StatusCode != http.StatusNoContent || optBody != "" {
			t.Errorf("OPTIONS %s: %d %q, want 204", c.path, opt.StatusCode, optBody)
		}
		wantHeader(t, "OPTIONS "+c.path, opt, "Allow", c.allow)
		bad, badBody := e.send("PATCH", c.path, "Authorization", "Bearer "+tok)
		if bad.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("PATCH %s: %d, want 405", c.path, bad.StatusCode)
		}
		wantHeader(t, "PATCH "+c.path, bad, "Allow", c.allow)
		wantErrorBody(t, "PATCH "+c.path, badBody, "method_not_allowed")
	}
	for _, stream := range []string{"/v1/ws", "/v1/stream"} {
		resp, _ := e.send("HEAD", stream, "Authorization", "Bearer "+tok)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s: %d, want 405 (a stream never ends)", stream, resp.StatusCode)
		}
		wantHeader(t, "HEAD "+stream, resp, "Allow", "GET, OPTIONS")
	}
	if resp, _ := e.send("OPTIONS", "/nowhere"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("OPTIONS on no route: %d, want 404", resp.StatusCode)
	}
}
