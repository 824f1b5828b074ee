package security

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsConn is a WebSocket client of the gateway with everything it received.
type wsConn struct {
	c    *websocket.Conn
	seen []string // every text message received, in order
}

// dialWS opens /v1/ws, with token as access_token where not empty.
func dialWS(t testing.TB, token string) *wsConn {
	t.Helper()
	u := "ws://" + gw.addr + "/v1/ws"
	if token != "" {
		u += "?access_token=" + url.QueryEscape(token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial /v1/ws: %v (HTTP %d)", err, status)
	}
	c.SetReadLimit(1 << 20)
	w := &wsConn{c: c}
	t.Cleanup(func() { _ = c.CloseNow() })
	return w
}

// send writes one JSON message.
func (w *wsConn) send(t testing.TB, msg any) {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("ws write: %v", err)
	}
}

// next reads one message within d, passing over heartbeats (which seen,
// searched for leaks, keeps); on a close or timeout it returns the error
// instead.
func (w *wsConn) next(d time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			return nil, err
		}
		w.seen = append(w.seen, string(b))
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return map[string]any{"unparsed": string(b)}, nil
		}
		if m["type"] != "heartbeat" {
			return m, nil
		}
	}
}

// closeCode reads until the gateway closes the connection, for at most d,
// and returns the close code: -1 where it did not close in time.
func (w *wsConn) closeCode(d time.Duration) websocket.StatusCode {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := w.next(time.Until(deadline)); err != nil {
			return websocket.CloseStatus(err)
		}
	}
	return -1
}

// until reads messages until one satisfies match, for at most d.
func (w *wsConn) until(t testing.TB, d time.Duration, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		m, err := w.next(time.Until(deadline))
		if err != nil {
			t.Fatalf("waiting for %s: %v; received %q", what, err, w.seen)
		}
		if match(m) {
			return m
		}
	}
}

// all is every message received so far, for leak searches.
func (w *wsConn) all() string {
	b, _ := json.Marshal(w.seen)
	return string(b)
}

func isType(typ, id string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ && m["id"] == id }
}
