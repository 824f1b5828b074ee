package security

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestIdleAndSlowConnectionsDoNotLockOut (issue 10 item 4): a gateway
// limited to 1,024 open files, with 1,100 idle keep-alive connections and
// 200 slowloris connections (headers or a body that never end) open
// against it, still serves an authenticated read within 3 s.
func TestIdleAndSlowConnectionsDoNotLockOut(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prlimit not found: CI needs util-linux (apt-get install util-linux) to lower the gateway's file limit")
		}
		t.Skip("no prlimit to lower the gateway's file limit: apt-get install util-linux")
	}
	g, err := startGateway(t.TempDir(), []string{prlimit, "--nofile=1024:1024", "--"})
	if g != nil {
		t.Cleanup(g.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	admin := hs(t, "a1", g.secretA, base(tenantA, "admin"))
	read := hs(t, "a1", g.secretA, base(tenantA, "read"))
	if r := rawRequest(t, g.addr, "PUT", "/v1/boards/idle", admin, "{}", 10*time.Second); !strings.HasPrefix(r, "HTTP/1.1 200") {
		t.Fatalf("PUT board: %.200s", r)
	}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	open := func(prefix string) {
		c, err := net.DialTimeout("tcp", g.addr, 2*time.Second)
		if err != nil {
			return // refused or dropped: the gateway's to decide
		}
		conns = append(conns, c)
		if prefix != "" {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte(prefix))
		}
	}
	for range 1100 {
		open("") // idle: connected, never a byte
	}
	for i := range 200 {
		if i%2 == 0 {
			open("GET /v1/boards HTTP/1.1\r\nHost: x\r\nX-Slow: ") // headers that never end
		} else {
			open("POST /v1/boards/idle/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin + "\r\nContent-Length: 100000\r\n\r\n{\"member\":") // a body that never ends
		}
	}
	t.Logf("%d attacking connections open", len(conns))
	if len(conns) < 1100 {
		t.Fatalf("only %d attacking connections opened: the test's own file limit?", len(conns))
	}
	for i := range 3 {
		began := time.Now()
		r := rawRequest(t, g.addr, "GET", "/v1/boards/idle/top", read, "", 3*time.Second)
		if !strings.HasPrefix(r, "HTTP/1.1 200") {
			t.Fatalf("read %d under attack: %.200q after %v", i, r, time.Since(began))
		}
		t.Logf("read %d served in %v", i, time.Since(began).Round(time.Millisecond))
	}
}

// rawRequest sends one request on a fresh connection and returns the
// answer's head and start of body, or the error text; the whole exchange
// is bounded by d.
func rawRequest(t *testing.T, addr, method, path, token, body string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		method, path, addr, token, len(body), body)
	if _, err := c.Write([]byte(req)); err != nil {
		return "write: " + err.Error()
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if n == 0 {
		return fmt.Sprintf("read: %v", err)
	}
	return string(buf[:n])
}
