package live

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
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

func secret(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

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
		secret('a'), secret('b')))
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
	key, _ := e.keys.SigningKey(tenant + "1")
	c := auth.Claims{Tenant: "casino-" + tenant, Subject: "p1", Roles: roles, Expiry: time.Now().Add(time.Hour)}
	if boards != nil {
		c.Boards = boards
	}
	tok, err := auth.Mint(key, c)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// tokenFor mints a token of tenant ("a" or "b") with roles, subject and expiry.
func (e *env) tokenFor(tenant string, roles auth.Role, sub string, exp time.Time) string {
	key, _ := e.keys.SigningKey(tenant + "1")
	tok, err := auth.Mint(key, auth.Claims{Tenant: "casino-" + tenant, Subject: sub, Roles: roles, Expiry: exp})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
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

// rowJSON is a row of a snapshot or diff (PROTOCOL.md).
type rowJSON struct {
	Rank     int     `json:"rank"`
	Member   string  `json:"member"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
	Name     string  `json:"name,omitempty"`
	Avatar   string  `json:"avatar,omitempty"`
	Country  string  `json:"country,omitempty"`
	Review   bool    `json:"review,omitempty"`
}

// wsMsg is a decoded server message.
type wsMsg struct {
	Type     string    `json:"type"`
	ID       *string   `json:"id"`
	Seq      uint64    `json:"seq"`
	Prev     *uint64   `json:"prev"`
	Total    int       `json:"total"`
	Rows     []rowJSON `json:"rows"`
	Gone     []int     `json:"gone"`
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	Board    string    `json:"board"`    // a board message
	Writable bool      `json:"writable"` // a heartbeat
	Stale    bool      `json:"stale"`    // a heartbeat
	At       string    `json:"at"`       // a heartbeat
	EndsAt   string    `json:"ends_at"`  // a board message
	Prizes   []struct {
		From, To int
		Prize    string
	} `json:"prizes"`
}

// wsClient is a real WebSocket client that applies snapshots and diffs as
// PROTOCOL.md says, checking that every diff's prev is the last seq.
type wsClient struct {
	t      *testing.T
	c      *websocket.Conn
	msgs   chan wsMsg
	closed chan struct{}
	status wire.CloseCode // the close code, after closed

	mu     sync.Mutex // guards the fields below
	state  map[string]map[int]rowJSON
	seq    map[string]uint64
	errors []wsMsg
	beats  []wsMsg // heartbeats, in order (not in log: a client ignores them for its views)
	log    []wsMsg // every message but heartbeats, in order
	bad    error
}

// dial connects to /v1/ws with query (such as "access_token=..."); read
// false leaves the connection unread (a stalled client).
func (e *env) dial(query string, read bool, opts *websocket.DialOptions) *wsClient {
	e.t.Helper()
	c, err := e.tryDial(query, opts)
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	wc := &wsClient{t: e.t, c: c, msgs: make(chan wsMsg, 1<<12), closed: make(chan struct{}),
		state: map[string]map[int]rowJSON{}, seq: map[string]uint64{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	e.t.Cleanup(func() { cancel(); c.CloseNow(); wg.Wait() })
	if read {
		wg.Add(1)
		go func() { defer wg.Done(); wc.readLoop(ctx) }()
	}
	return wc
}

func (e *env) tryDial(query string, opts *websocket.DialOptions) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/v1/ws?" + query
	c, _, err := websocket.Dial(ctx, u, opts)
	return c, err
}

func (wc *wsClient) readLoop(ctx context.Context) {
	defer close(wc.closed)
	for {
		_, data, err := wc.c.Read(ctx)
		if err != nil {
			wc.status = wire.CloseCode(websocket.CloseStatus(err))
			return
		}
		var m wsMsg
		if err := json.Unmarshal(data, &m); err != nil {
			wc.fail(fmt.Errorf("message %q: %v", data, err))
			continue
		}
		wc.apply(m, data)
	}
}

func (wc *wsClient) fail(err error) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.bad == nil {
		wc.bad = err
	}
}

func (wc *wsClient) apply(m wsMsg, raw []byte) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	id := ""
	if m.ID != nil {
		id = *m.ID
	}
	if m.Type == "heartbeat" {
		wc.beats = append(wc.beats, m)
		return
	}
	wc.log = append(wc.log, m)
	switch m.Type {
	case "error":
		wc.errors = append(wc.errors, m)
		return
	case "board":
		return
	case "snapshot":
		wc.state[id] = map[int]rowJSON{}
	case "diff":
		if m.Prev == nil || *m.Prev != wc.seq[id] {
			wc.bad = fmt.Errorf("sub %s: diff prev %v, last seq %d: %s", id, m.Prev, wc.seq[id], raw)
		}
		for _, g := range m.Gone {
			delete(wc.state[id], g)
		}
	}
	for _, r := range m.Rows {
		wc.state[id][r.Rank] = r
	}
	wc.seq[id] = m.Seq
}

func (wc *wsClient) send(v any) {
	wc.t.Helper()
	data, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		data = string(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wc.c.Write(ctx, websocket.MessageText, []byte(data)); err != nil {
		wc.t.Fatalf("send: %v", err)
	}
}

// rows returns a copy of subscription id's state, and whether a snapshot came.
func (wc *wsClient) rows(id string) (map[int]rowJSON, bool) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.bad != nil {
		wc.t.Fatal(wc.bad)
	}
	st, ok := wc.state[id]
	return maps.Clone(st), ok
}

func (wc *wsClient) lastSeq(id string) uint64 {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.seq[id]
}

// messages returns every message so far, in order.
func (wc *wsClient) messages() []wsMsg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]wsMsg(nil), wc.log...)
}

// heartbeats returns the heartbeats so far.
func (wc *wsClient) heartbeats() []wsMsg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]wsMsg(nil), wc.beats...)
}

// errorsSeen returns the error messages so far.
func (wc *wsClient) errorsSeen() []wsMsg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]wsMsg(nil), wc.errors...)
}

// waitClosed waits for the server to close and returns the close code.
func (wc *wsClient) waitClosed(d time.Duration) wire.CloseCode {
	wc.t.Helper()
	select {
	case <-wc.closed:
		return wc.status
	case <-time.After(d):
		wc.t.Fatalf("connection still open after %v", d)
		return 0
	}
}

// subscribe sends a subscribe message for view on board.
func (wc *wsClient) subscribe(id, board string, view map[string]any) {
	wc.send(map[string]any{"type": "subscribe", "id": id, "board": board, "view": view})
}

// smallReadBuffer dials with a 4 KiB receive buffer, so that a client that
// does not read fills its socket quickly.
func smallReadBuffer() *websocket.DialOptions {
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}}
	return &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}}
}

// checkFor waits for cond: internal/await.For.
func checkFor(t *testing.T, total time.Duration, cond func() error) {
	t.Helper()
	await.For(t, total, cond)
}

func decode(t *testing.T, data []byte) wsMsg {
	var m wsMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
