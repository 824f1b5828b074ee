package api

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
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
	key, _ := e.keys.SigningKey(tenant + "1")
	tok, err := auth.Mint(key, auth.Claims{Tenant: "casino-" + tenant, Subject: sub, Roles: roles, Expiry: exp})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// wsMsg is a decoded server message.
type wsMsg struct {
	Type    string    `json:"type"`
	ID      *string   `json:"id"`
	Seq     uint64    `json:"seq"`
	Prev    *uint64   `json:"prev"`
	Total   int       `json:"total"`
	Rows    []rowJSON `json:"rows"`
	Gone    []int     `json:"gone"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Board   string    `json:"board"`   // a board message
	EndsAt  string    `json:"ends_at"` // a board message
	Prizes  []struct {
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

	mu     sync.Mutex // guards the fields below
	state  map[string]map[int]rowJSON
	seq    map[string]uint64
	errors []wsMsg
	log    []wsMsg // every message, in order
	bad    error
}

// dial connects to /v1/ws with query (such as "access_token=..."); read
// false leaves the connection unread (a stalled client).
func (e *liveEnv) dial(query string, read bool, opts *websocket.DialOptions) *wsClient {
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

func (e *liveEnv) tryDial(query string, opts *websocket.DialOptions) (*websocket.Conn, error) {
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
	checkWSMessage(wc.t, raw) // every message of every WebSocket test, against x-websocket
	wc.mu.Lock()
	defer wc.mu.Unlock()
	id := ""
	if m.ID != nil {
		id = *m.ID
	}
	if m.Type == "heartbeat" {
		return // how the gateway stands, every 2 s: nothing of a view (internal/live tests it)
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

// errorsSeen returns the error messages so far.
func (wc *wsClient) errorsSeen() []wsMsg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]wsMsg(nil), wc.errors...)
}

// subscribe sends a subscribe message for view on board.
func (wc *wsClient) subscribe(id, board string, view map[string]any) {
	wc.send(map[string]any{"type": "subscribe", "id": id, "board": board, "view": view})
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

func decode(t *testing.T, data []byte) wsMsg {
	var m wsMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
