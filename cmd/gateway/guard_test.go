package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// TestIdleAndSlowConnectionsCannotLockOut: the gateway runs with 1,024
// file descriptors (prlimit; Go raises the soft limit to the hard one, so
// both are set). 1,100 connections that send nothing and 200 that send
// their headers a byte at a time are held open, more than the gateway has
// descriptors for; an authenticated read is still served within 3 s, each
// time, and the gateway never runs out of descriptors.
func TestIdleAndSlowConnectionsCannotLockOut(t *testing.T) {
	const prlimit = "/usr/bin/prlimit"
	if _, err := os.Stat(prlimit); err != nil {
		t.Skip("needs", prlimit)
	}
	if testing.Short() {
		t.Skip("opens 1,300 connections")
	}
	keys, sk := keyFile(t)
	p := startGatewayCmd(t, []string{prlimit, "--nofile=1024:1024", builtGateway(t)}, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())
	if got := p.logged(regexp.MustCompile(`connection_budget=896\b`)); len(got) != 1 {
		t.Fatalf("the ready line does not show a budget of 896 at 1,024 descriptors: %v", p.logged(readyLine))
	}
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, "{}", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	if status, err := call("POST", p.url("/v1/boards/b/scores"), tok, `{"member":"p1","score":1}`, nil); status != 200 {
		t.Fatalf("submit: %d %v", status, err)
	}

	var idle, slow []net.Conn
	t.Cleanup(func() {
		for _, c := range append(idle, slow...) {
			c.Close()
		}
	})
	for range 1100 {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial after %d idle connections: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	for i := range 200 {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial after %d slow connections: %v", len(slow), err)
		}
		fmt.Fprintf(c, "GET /v1/boards/b/top HTTP/1.1\r\nHost: x\r\nX-Slow-%d: ", i)
		slow = append(slow, c)
	}
	stop := make(chan struct{})
	dripped := make(chan struct{})
	go func() { // one more header byte on each slow connection every 200 ms
		defer close(dripped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, c := range slow {
					c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
					c.Write([]byte("a"))
				}
			}
		}
	}()
	defer func() { close(stop); <-dripped }()

	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 5 {
		req, _ := http.NewRequest("GET", p.url("/v1/boards/b/top"), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("read %d with 1,300 idle and slow connections open: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"p1"`) || took > 3*time.Second {
			t.Fatalf("read %d: %d after %v: %s", i, resp.StatusCode, took, body)
		}
		t.Logf("read %d served in %v", i, took.Round(time.Millisecond))
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	t.Logf("gateway holds %d descriptors of 1,024", len(fds))
	awaitMetric(t, sideAddr(t, p, "--metrics-addr"), "rankwire_http_connections_evicted_total", 300)
	if got := p.logged(regexp.MustCompile(`too many open files`)); len(got) > 0 {
		t.Fatalf("the gateway ran out of descriptors: %v", got[0])
	}
	if got := p.logged(regexp.MustCompile(`connection budget full`)); len(got) == 0 {
		t.Error("no warning logged for the evictions")
	}
}

// TestPendingWebSocketsCannotLockOut: WebSocket upgrades that never send
// their auth message hold a descriptor each, like idle connections, and
// are evicted like them: with 1,000 of them open against a gateway of
// 1,024 descriptors, an authenticated read is served within 3 s, and a
// WebSocket that authenticated by message before the flood is not evicted.
func TestPendingWebSocketsCannotLockOut(t *testing.T) {
	const prlimit = "/usr/bin/prlimit"
	if _, err := os.Stat(prlimit); err != nil {
		t.Skip("needs", prlimit)
	}
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	keys, sk := keyFile(t)
	p := startGatewayCmd(t, []string{prlimit, "--nofile=1024:1024", builtGateway(t)}, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_PUSH_INTERVAL=20ms")
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, "{}", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := wsjson.Write(ctx, ws, map[string]any{"type": "auth", "token": tok}); err != nil {
		t.Fatal(err)
	}
	sub := map[string]any{"type": "subscribe", "id": "s1", "board": "b", "view": map[string]any{"kind": "top", "limit": 10}}
	if err := wsjson.Write(ctx, ws, sub); err != nil {
		t.Fatal(err)
	}
	var msg map[string]any
	if err := wsjson.Read(ctx, ws, &msg); err != nil || msg["type"] != "snapshot" {
		t.Fatalf("first message %v %v, want a snapshot", msg, err)
	}

	var pending []net.Conn
	t.Cleanup(func() {
		for _, c := range pending {
			c.Close()
		}
	})
	upgraded := 0
	for range 1000 {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial after %d pending WebSockets: %v", len(pending), err)
		}
		pending = append(pending, c)
		io.WriteString(c, "GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode == 101 {
			upgraded++
		}
	}
	if upgraded < 900 {
		t.Fatalf("only %d of 1,000 upgrades answered 101", upgraded)
	}
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		req, _ := http.NewRequest("GET", p.url("/v1/boards/b/top"), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("read %d with 1,000 WebSockets waiting for auth: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("read %d: %d", i, resp.StatusCode)
		}
		t.Logf("read %d served in %v", i, time.Since(start).Round(time.Millisecond))
	}
	if status, err := call("POST", p.url("/v1/boards/b/scores"), tok, `{"member":"after-flood","score":5}`, nil); status != 200 {
		t.Fatalf("submit: %d %v", status, err)
	}
	for {
		msg = nil
		if err := wsjson.Read(ctx, ws, &msg); err != nil {
			t.Fatalf("the authenticated WebSocket after the flood: %v", err)
		}
		if b, _ := json.Marshal(msg); strings.Contains(string(b), `"after-flood"`) {
			break
		}
	}
}
