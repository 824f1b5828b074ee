package api

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/edgetest"
	"github.com/rankwire/rankwire/internal/wstest"
)

// liveEnv is env with a fast push interval and the *Server at hand.
type liveEnv struct {
	*env
	s *Server
}

// newLiveEnv starts a hub (push interval 10 ms) on an embedded NATS server
// in a temp dir and the Server on a loopback listener; casino-b may hold
// two connections.
// tune, if given, changes the Server before it serves.
func newLiveEnv(t *testing.T, cfg Config, tune ...func(*Server)) *liveEnv {
	t.Helper()
	keys, h := startTestHub(t, `"connections":2`, hub.Config{PushInterval: 10 * time.Millisecond})
	cfg.Hub, cfg.Verifier, cfg.Keys = h, auth.NewVerifier(keys, auth.Options{}), keys
	s := New(cfg)
	h.SetFeed(s.Feed()) // New takes no feed: its owner wires it
	for _, f := range tune {
		f(s)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.CloseWebSockets(ctx)
		srv.Close()
	})
	return &liveEnv{env: &env{t: t, srv: srv, keys: keys, hub: h}, s: s}
}

// tokenFor mints a token of tenant ("a" or "b") with roles, subject and expiry.
func (e *liveEnv) tokenFor(tenant string, roles auth.Role, sub string, exp time.Time) string {
	e.t.Helper()
	return edgetest.Mint(e.t, e.keys, tenant, auth.Claims{Subject: sub, Roles: roles, Expiry: exp})
}

// wsMsg is a decoded server message; wsClient a WebSocket client that
// applies snapshots and diffs (internal/wstest).
type (
	wsMsg    = wstest.Msg
	wsClient = wstest.Client
)

// dial connects to /v1/ws with query (such as "access_token=..."); read
// false leaves the connection unread (a stalled client). Every message
// read is checked against the OpenAPI document's x-websocket.
func (e *liveEnv) dial(query string, read bool, opts *websocket.DialOptions) *wsClient {
	e.t.Helper()
	return wstest.Dial(e.t, wstest.URL(e.srv.URL, query), wstest.Options{Read: read, Dial: opts, Check: checkWSMessage})
}

func (e *liveEnv) tryDial(query string, opts *websocket.DialOptions) (*websocket.Conn, error) {
	return wstest.TryDial(wstest.URL(e.srv.URL, query), opts)
}

// asRows keys an HTTP rows answer by rank.
func asRows(out map[string]any) map[int]rowJSON {
	rows := map[int]rowJSON{}
	list, _ := out["rows"].([]any)
	for _, r := range list {
		m := r.(map[string]any)
		rows[int(m["rank"].(float64))] = rowOf(m)
	}
	if _, ok := out["rank"]; ok && out["rows"] == nil {
		rows[int(out["rank"].(float64))] = rowOf(out)
	}
	return rows
}

// rowOf reads a decoded row, its profile fields included.
func rowOf(m map[string]any) rowJSON {
	str := func(k string) string { s, _ := m[k].(string); return s }
	return rowJSON{Rank: int(m["rank"].(float64)), Member: str("member"), Score: m["score"].(float64), Subscore: m["subscore"].(float64),
		Name: str("name"), Avatar: str("avatar"), Country: str("country"), Review: m["review"] == true}
}

// checkFor waits for cond: internal/await.For.
func checkFor(t *testing.T, total time.Duration, cond func() error) {
	t.Helper()
	await.For(t, total, cond)
}

func decode(t *testing.T, data []byte) wsMsg { return wstest.Decode(t, data) }
