package live

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/edgetest"
	"github.com/rankwire/rankwire/internal/wstest"
	"github.com/rankwire/rankwire/wire"
)

// env is a live plane under test: a hub (push interval 10 ms unless
// newEnvPush says otherwise) on an
// embedded NATS server in a temp dir, with the plane wired to its feed and
// mounted at /v1/ws of a loopback server; two tenants, casino-a and
// casino-b, of which casino-b may hold two connections.
type env struct {
	t    *testing.T
	srv  *httptest.Server
	keys *auth.Keyring
	hub  *hub.Hub
	p    *Plane
	v    *auth.Verifier
}

const admin = auth.RoleAdmin

// newEnv starts the env with o; tune, if given, changes the Plane before
// it serves.
func newEnv(t *testing.T, o Options, tune ...func(*Plane)) *env {
	return newEnvLog(t, o, nil, tune...)
}

// newEnvLog is newEnv with the plane's log going to log.
func newEnvLog(t *testing.T, o Options, log *slog.Logger, tune ...func(*Plane)) *env {
	t.Helper()
	return newEnvPush(t, o, log, 10*time.Millisecond, tune...)
}

// newEnvPush is newEnvLog with the hub's push interval set to push.
func newEnvPush(t *testing.T, o Options, log *slog.Logger, push time.Duration, tune ...func(*Plane)) *env {
	t.Helper()
	return newEnvHub(t, hub.Config{PushInterval: push}, o, log, tune...)
}

// newEnvHub is newEnvLog with the hub started from hc (its DataDir set
// here; its PushInterval 10 ms where hc has none).
func newEnvHub(t *testing.T, hc hub.Config, o Options, log *slog.Logger, tune ...func(*Plane)) *env {
	t.Helper()
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{
		"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":%q}]},
		"casino-b":{"keys":[{"kid":"b1","alg":"HS256","secret":%q}],"limits":{"connections":2}}}}`,
		edgetest.Secret('a'), edgetest.Secret('b')))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc.DataDir = t.TempDir()
	if hc.PushInterval == 0 {
		hc.PushInterval = 10 * time.Millisecond
	}
	h, err := hub.Start(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	v := auth.NewVerifier(keys, auth.Options{})
	p := New(Config{Hub: h, Verifier: v, Logger: log, Options: o})
	h.SetFeed(p.Feed())
	for _, f := range tune {
		f(p)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/ws", p)
	mux.HandleFunc("GET /v1/stream", p.ServeStream)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Close(ctx)
		srv.Close()
	})
	return &env{t: t, srv: srv, keys: keys, hub: h, p: p, v: v}
}

// token mints a token of tenant ("a" or "b") with roles and board patterns.
func (e *env) token(tenant string, roles auth.Role, boards ...string) string {
	e.t.Helper()
	return edgetest.Mint(e.t, e.keys, tenant, auth.Claims{Subject: "p1", Roles: roles, Boards: boards, Expiry: time.Now().Add(time.Hour)})
}

// tokenFor mints a token of tenant ("a" or "b") with roles, subject and expiry.
func (e *env) tokenFor(tenant string, roles auth.Role, sub string, exp time.Time) string {
	e.t.Helper()
	return edgetest.Mint(e.t, e.keys, tenant, auth.Claims{Subject: sub, Roles: roles, Expiry: exp})
}

// putBoard creates board of tenant ("a" or "b") with settings s.
func (e *env) putBoard(tenant, board string, s hub.Settings) {
	e.t.Helper()
	if _, err := e.hub.PutBoard(context.Background(), "casino-"+tenant, board, s); err != nil {
		e.t.Fatal(err)
	}
}

// submit submits items to board of tenant ("a" or "b"); it returns once
// the local replica applied them.
func (e *env) submit(tenant, board string, items ...hub.Item) {
	e.t.Helper()
	if _, err := e.hub.Submit(context.Background(), "casino-"+tenant, board, items); err != nil {
		e.t.Fatal(err)
	}
}

// reload does what api's ReloadKeys does to the plane: it swaps the
// Verifier's keys for next and closes the connections whose key left.
func (e *env) reload(next *auth.Keyring) (auth.KeyChanges, error) {
	old, err := e.v.Swap(next)
	if err != nil {
		return auth.KeyChanges{}, err
	}
	changes := auth.CompareKeys(old, next)
	e.p.CloseRevoked(next, changes.RemovedKeys)
	return changes, nil
}

// rowJSON is a row of a snapshot or diff (PROTOCOL.md); wsMsg a decoded
// server message; wsClient a WebSocket client that applies snapshots and
// diffs (internal/wstest).
type (
	rowJSON  = wire.Row
	wsMsg    = wstest.Msg
	wsClient = wstest.Client
)

// dial connects to /v1/ws with query (such as "access_token=..."); read
// false leaves the connection unread (a stalled client).
func (e *env) dial(query string, read bool, opts *websocket.DialOptions) *wsClient {
	e.t.Helper()
	return wstest.Dial(e.t, wstest.URL(e.srv.URL, query), wstest.Options{Read: read, Dial: opts})
}

func (e *env) tryDial(query string, opts *websocket.DialOptions) (*websocket.Conn, error) {
	return wstest.TryDial(wstest.URL(e.srv.URL, query), opts)
}

// checkFor waits for cond: internal/await.For.
func checkFor(t *testing.T, total time.Duration, cond func() error) {
	t.Helper()
	await.For(t, total, cond)
}

func decode(t *testing.T, data []byte) wsMsg { return wstest.Decode(t, data) }
