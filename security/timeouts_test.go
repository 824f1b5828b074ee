package security

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTimeoutsCloseIdleAndSlowConnections: on a gateway run with
// --idle-timeout 1s and --read-timeout 1s, a keep-alive connection left
// idle after a request is closed, and a request whose body stops coming
// is cut off (a 4xx or a close) and applies nothing, each within a few
// seconds, while the connection's owner keeps quiet.
func TestTimeoutsCloseIdleAndSlowConnections(t *testing.T) {
	g, err := startGateway(t.TempDir(), nil, "RANKWIRE_IDLE_TIMEOUT=1s", "RANKWIRE_READ_TIMEOUT=1s")
	if g != nil {
		t.Cleanup(g.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	admin := hs(t, "a1", g.secretA, base(tenantA, "admin"))
	if r := rawRequest(t, g.addr, "PUT", "/v1/boards/slow", admin, "{}", 10*time.Second); !strings.HasPrefix(r, "HTTP/1.1 200") {
		t.Fatalf("PUT board: %.200s", r)
	}

	idle := dialTimed(t, g.addr)
	fmt.Fprintf(idle, "GET /v1/boards/slow/top HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", admin)
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the idle connection's request: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if d, closed := closedWithin(br, 6*time.Second); !closed {
		t.Errorf("a keep-alive connection idle for %v with --idle-timeout 1s is still open", d)
	} else {
		t.Logf("idle connection closed after %v", d.Round(time.Millisecond))
	}

	slow := dialTimed(t, g.addr)
	fmt.Fprintf(slow, "POST /v1/boards/slow/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\n{\"member\":\"slow\",", admin)
	sr := bufio.NewReader(slow)
	began := time.Now()
	if resp, err := http.ReadResponse(sr, nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("a body that stopped coming: %d, want a 4xx or a close", resp.StatusCode)
		}
	}
	if d := time.Since(began); d > 6*time.Second {
		t.Errorf("a body that stopped coming held for %v with --read-timeout 1s", d)
	} else {
		t.Logf("slow body cut off after %v", d.Round(time.Millisecond))
	}
	if r := rawRequest(t, g.addr, "GET", "/v1/boards/slow/top", admin, "", 10*time.Second); !strings.Contains(r, `"total":0`) {
		t.Errorf("the cut-off submission was applied: %.300s", r)
	}
}

// dialTimed connects to addr with a 10 s deadline on everything after.
func dialTimed(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// closedWithin reads from r until the peer closes (EOF or reset) or d
// passes; it reports how long it waited and whether the peer closed.
func closedWithin(r *bufio.Reader, d time.Duration) (time.Duration, bool) {
	began := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, r)
		done <- err
	}()
	select {
	case <-done:
		return time.Since(began), true
	case <-time.After(d):
		return time.Since(began), false
	}
}
