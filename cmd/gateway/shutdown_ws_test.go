package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// TestSIGTERMClosesWebSockets: a subscribed client gets close code 1001
// (going away) when the gateway shuts down, and the gateway exits 0.
func TestSIGTERMClosesWebSockets(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_PUSH_INTERVAL=20ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := subscribedClient(ctx, t, p, adminToken(t, sk))
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	for err == nil {
		_, _, err = c.Read(ctx)
	}
	if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
		t.Errorf("close %v (%v), want 1001", code, err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(stopBound):
		t.Errorf("%v: no exit %v after SIGTERM; %s", errHung, stopBound, p.hungDump())
	}
}

// TestWebSocketOutlivesHTTPTimeouts: --idle-timeout and --read-timeout
// bound HTTP connections only: a WebSocket that has been quiet longer than
// both still gets its updates. The clock is a keep-alive HTTP connection
// opened after the WebSocket: once the gateway has closed it for being
// idle, the WebSocket has been quiet longer than both timeouts.
func TestWebSocketOutlivesHTTPTimeouts(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_PUSH_INTERVAL=20ms",
		"RANKWIRE_IDLE_TIMEOUT=1s", "RANKWIRE_READ_TIMEOUT=1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok := adminToken(t, sk)
	c := subscribedClient(ctx, t, p, tok)
	start := time.Now()
	idle, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	idle.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(idle); err != nil { // until the gateway closes it
		t.Fatalf("the idle HTTP connection was not closed: %v", err)
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("the idle connection closed after %v, before --idle-timeout", took)
	}
	if status, err := call("POST", p.url("/v1/boards/live/scores"), tok, `{"member":"late","score":5}`, nil); status != 200 {
		t.Fatalf("submit: %d %v", status, err)
	}
	for {
		var msg map[string]any
		if err := wsjson.Read(ctx, c, &msg); err != nil {
			t.Fatalf("the WebSocket after %v quiet: %v", time.Since(start), err)
		}
		if b, _ := json.Marshal(msg); strings.Contains(string(b), `"late"`) {
			return
		}
	}
}

// subscribedClient creates board "live" on p, connects a WebSocket with tok,
// subscribes to the board's top 10 and reads the snapshot. The connection
// is closed when the test ends.
func subscribedClient(ctx context.Context, t *testing.T, p *proc, tok string) *websocket.Conn {
	t.Helper()
	if status, err := call("PUT", p.url("/v1/boards/live"), tok, "{}", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	c, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/v1/ws?access_token="+tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	sub := map[string]any{"type": "subscribe", "id": "s1", "board": "live", "view": map[string]any{"kind": "top", "limit": 10}}
	if err := wsjson.Write(ctx, c, sub); err != nil {
		t.Fatal(err)
	}
	var snap map[string]any
	if err := wsjson.Read(ctx, c, &snap); err != nil || snap["type"] != "snapshot" {
		t.Fatalf("first message %v %v, want a snapshot", snap, err)
	}
	return c
}
