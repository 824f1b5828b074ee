package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/edgetest"
)

// env is a gateway under test: a real hub on an embedded NATS server in a
// temp dir, the api Server over a real loopback listener, two tenants.
type env struct {
	t    *testing.T
	srv  *httptest.Server
	keys *auth.Keyring
	hub  *hub.Hub
	api  *Server // the Server behind srv (which may wrap it)
}

// startTestHub starts a hub on an embedded NATS server in a temp dir and
// parses a key file of two tenants, casino-a and casino-b; bLimits is
// casino-b's limits object, without braces. casino-a's write rates are
// high, so that tests of other things never meet them (quota_test.go
// meets them on casino-b).
func startTestHub(t testing.TB, bLimits string, hc hub.Config) (*auth.Keyring, *hub.Hub) {
	t.Helper()
	keyFile := fmt.Sprintf(`{"tenants":{
		"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":%q}],
			"limits":{"board_writes_per_second":1e6,"identity_writes_per_second":1e6,"token_mints_per_minute":1000}},
		"casino-b":{"keys":[{"kid":"b1","alg":"HS256","secret":%q}],"limits":{%s}}}}`,
		edgetest.Secret('a'), edgetest.Secret('b'), bLimits)
	keys, err := auth.ParseKeys([]byte(keyFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc.DataDir = t.TempDir()
	h, err := hub.Start(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return keys, h
}

func newEnv(t *testing.T, cfg Config) *env { return startEnv(t, cfg, true) }

// newRawEnv is newEnv without the OpenAPI check, for the tests of what a
// connection does (slow and refused bodies): the check's recorder answers
// after the handler returns, where the server itself may answer earlier.
func newRawEnv(t *testing.T, cfg Config) *env { return startEnv(t, cfg, false) }

func startEnv(t *testing.T, cfg Config, checked bool) *env {
	t.Helper()
	keys, h := startTestHub(t, `"submissions_per_second":5`, hub.Config{})
	cfg.Hub, cfg.Verifier, cfg.Keys = h, auth.NewVerifier(keys, auth.Options{}), keys
	// Every request and answer of the tests that use env is checked
	// against the OpenAPI document (openapi_test.go).
	s := New(cfg)
	var handler http.Handler = s
	if checked {
		handler = specChecked(t, handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, keys: keys, hub: h, api: s}
}

// token mints a token of tenant ("a" or "b") with roles and board patterns.
func (e *env) token(tenant string, roles auth.Role, boards ...string) string {
	e.t.Helper()
	return edgetest.Mint(e.t, e.keys, tenant, auth.Claims{Subject: "p1", Roles: roles, Boards: boards, Expiry: time.Now().Add(time.Hour)})
}

// do sends a request and returns the status and the decoded JSON body.
func (e *env) do(method, path, token, body string) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s %s: status %d, body not JSON: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// must sends a request that must answer status.
func (e *env) must(status int, method, path, token, body string) map[string]any {
	e.t.Helper()
	got, out := e.do(method, path, token, body)
	if got != status {
		e.t.Fatalf("%s %s: status %d, want %d: %v", method, path, got, status, out)
	}
	return out
}

// errCode returns the error code and message of an error body.
func errCode(out map[string]any) (string, string) {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	return code, msg
}

// members lists the member ids of a rows answer, in order.
func members(out map[string]any) []string {
	var ms []string
	rows, _ := out["rows"].([]any)
	for _, r := range rows {
		ms = append(ms, r.(map[string]any)["member"].(string))
	}
	return ms
}
