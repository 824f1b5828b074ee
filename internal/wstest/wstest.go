// Package wstest is a WebSocket client of the live protocol for tests: it
// dials over loopback, reads every message on a goroutine of its own, and
// applies snapshots and diffs as docs/PROTOCOL.md says, checking that
// every diff's prev is the last seq of its subscription. The tests of api
// and internal/live share it.
//
// Test helper: only tests import it. It may import coder/websocket and
// wire (plus the standard library).
package wstest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/wire"
)

// Msg is a decoded server message: the fields of every kind in one.
type Msg struct {
	Type     string     `json:"type"`
	ID       *string    `json:"id"`
	Seq      uint64     `json:"seq"`
	Prev     *uint64    `json:"prev"`
	Total    int        `json:"total"`
	Rows     []wire.Row `json:"rows"`
	Gone     []int      `json:"gone"`
	Code     string     `json:"code"`
	Message  string     `json:"message"`
	Board    string     `json:"board"`    // a board message
	Writable bool       `json:"writable"` // a heartbeat
	Stale    bool       `json:"stale"`    // a heartbeat
	At       string     `json:"at"`       // a heartbeat
	EndsAt   string     `json:"ends_at"`  // a board message
	Prizes   []struct {
		From, To int
		Prize    string
	} `json:"prizes"`
}

// Options says how Dial connects and reads.
type Options struct {
	// Read starts the reading goroutine; false leaves the connection
	// unread (a stalled client), for the test to read itself.
	Read bool
	// Dial are coder/websocket's options (SmallReadBuffer). Nil: its
	// defaults.
	Dial *websocket.DialOptions
	// Check, where set, is called with every message read, heartbeats
	// included, before it is applied (api checks each against its OpenAPI
	// document).
	Check func(t testing.TB, raw []byte)
}

// Client is a real WebSocket client of one connection. Its methods are
// safe for concurrent use with its reading goroutine.
type Client struct {
	t      testing.TB
	c      *websocket.Conn
	check  func(t testing.TB, raw []byte)
	closed chan struct{}
	status wire.CloseCode // the close code, once closed is closed

	mu     sync.Mutex // guards the fields below
	state  map[string]map[int]wire.Row
	seq    map[string]uint64
	errors []Msg
	beats  []Msg // heartbeats, in order (not in log: a client ignores them for its views)
	log    []Msg // every message but heartbeats, in order
	bad    error
}

// URL returns the WebSocket URL of /v1/ws with query (such as
// "access_token=...") on the server at base (http://... or https://...).
func URL(base, query string) string {
	return "ws" + strings.TrimPrefix(base, "http") + "/v1/ws?" + query
}

// TryDial connects to url (ws://...), bounded by 5 s.
func TryDial(url string, opts *websocket.DialOptions) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, opts)
	return c, err
}

// Dial connects to url, failing t where it cannot. The connection is
// closed, and the reading goroutine waited for, at t's cleanup.
func Dial(t testing.TB, url string, o Options) *Client {
	t.Helper()
	c, err := TryDial(url, o.Dial)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	wc := &Client{t: t, c: c, check: o.Check, closed: make(chan struct{}),
		state: map[string]map[int]wire.Row{}, seq: map[string]uint64{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); c.CloseNow(); wg.Wait() })
	if o.Read {
		wg.Go(func() { wc.readLoop(ctx) })
	}
	return wc
}

// Conn returns the connection, for a test that reads, writes or closes
// it itself.
func (wc *Client) Conn() *websocket.Conn { return wc.c }

func (wc *Client) readLoop(ctx context.Context) {
	defer close(wc.closed)
	for {
		_, data, err := wc.c.Read(ctx)
		if err != nil {
			wc.status = wire.CloseCode(websocket.CloseStatus(err))
			return
		}
		wc.Apply(data)
	}
}

// Apply decodes raw, a server message, and applies it as the reading
// goroutine does: for a test that reads the connection itself.
func (wc *Client) Apply(raw []byte) {
	var m Msg
	if err := json.Unmarshal(raw, &m); err != nil {
		wc.fail(fmt.Errorf("message %q: %v", raw, err))
		return
	}
	if wc.check != nil {
		wc.check(wc.t, raw)
	}
	wc.mu.Lock()
	defer wc.mu.Unlock()
	wc.applyLocked(m, raw)
}

func (wc *Client) fail(err error) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.bad == nil {
		wc.bad = err
	}
}

// applyLocked applies m: a snapshot replaces its subscription's rows, a
// diff must follow the last seq and changes them.
func (wc *Client) applyLocked(m Msg, raw []byte) {
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
		wc.state[id] = map[int]wire.Row{}
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

// Seed sets subscription id's rows and last seq, as a client that resumes
// with since holds them.
func (wc *Client) Seed(id string, rows map[int]wire.Row, seq uint64) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	wc.state[id], wc.seq[id] = maps.Clone(rows), seq
}

// Err returns the first violation of the protocol seen (a diff out of
// order, a message that does not decode), or nil.
func (wc *Client) Err() error {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.bad
}

// Send writes v, a string as is or anything else as JSON, failing the
// test where it cannot.
func (wc *Client) Send(v any) {
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

// Subscribe sends a subscribe message for view on board.
func (wc *Client) Subscribe(id, board string, view map[string]any) {
	wc.t.Helper()
	wc.Send(map[string]any{"type": "subscribe", "id": id, "board": board, "view": view})
}

// Rows returns a copy of subscription id's rows by rank, and whether a
// snapshot came. It fails the test on a violation of the protocol.
func (wc *Client) Rows(id string) (map[int]wire.Row, bool) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.bad != nil {
		wc.t.Fatal(wc.bad)
	}
	st, ok := wc.state[id]
	return maps.Clone(st), ok
}

// LastSeq returns the seq of subscription id's last snapshot or diff.
func (wc *Client) LastSeq(id string) uint64 {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.seq[id]
}

// Messages returns every message but heartbeats so far, in order.
func (wc *Client) Messages() []Msg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]Msg(nil), wc.log...)
}

// Heartbeats returns the heartbeats so far, in order.
func (wc *Client) Heartbeats() []Msg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]Msg(nil), wc.beats...)
}

// Errors returns the error messages so far, in order.
func (wc *Client) Errors() []Msg {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return append([]Msg(nil), wc.errors...)
}

// WaitClosed waits up to d for the server to close the connection and
// returns its close code; it fails the test where it stays open. Only
// for a client that reads (Options.Read).
func (wc *Client) WaitClosed(d time.Duration) wire.CloseCode {
	wc.t.Helper()
	select {
	case <-wc.closed:
		return wc.status
	case <-time.After(d):
		wc.t.Fatalf("connection still open after %v", d)
		return 0
	}
}

// Decode decodes data, a server message, failing t where it does not.
func Decode(t testing.TB, data []byte) Msg {
	t.Helper()
	var m Msg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// SmallReadBuffer dials with a 4 KiB receive buffer, so that a client
// that does not read fills its socket quickly.
func SmallReadBuffer() *websocket.DialOptions {
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
