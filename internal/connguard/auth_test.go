package connguard

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// serveAuth is serve with AuthConnState and ConnContext.
func serveAuth(t *testing.T, budget int, h http.Handler) (*Guard, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Budget: budget})
	srv := &http.Server{Handler: h, ConnState: g.AuthConnState, ConnContext: ConnContext, ReadHeaderTimeout: time.Minute}
	go srv.Serve(g.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return g, ln.Addr().String()
}

// waitBack waits until the server's side of the client connection c is
// the last of the waiting connections.
func waitBack(t *testing.T, g *Guard, c net.Conn) {
	t.Helper()
	await.For(t, 5*time.Second, func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		back := g.waiting.Back()
		if back == nil || back.Value.(*conn).RemoteAddr().String() != c.LocalAddr().String() {
			return fmt.Errorf("%v is not last of the waiting connections", c.LocalAddr())
		}
		return nil
	})
}

// TestAuthConnStateEvictsUntrustedRequests: under AuthConnState a request
// in progress that no handler vouched for (a client without a token) is
// evicted for a newcomer like an idle connection, while one marked with
// BusyContext (authenticated) is not; and a keep-alive connection waits
// again from the back of the queue after each request.
func TestAuthConnStateEvictsUntrustedRequests(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	started := make(chan string, 2)
	g, addr := serveAuth(t, 3, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/trusted":
			BusyContext(r.Context())
		case "/untrusted":
		default:
			io.WriteString(w, "ok")
			return
		}
		started <- r.URL.Path
		<-release
	}))
	keep := dial(t, addr) // first in, but active since: requeued behind the others
	untrusted := dial(t, addr)
	io.WriteString(untrusted, "GET /untrusted HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	trusted := dial(t, addr)
	io.WriteString(trusted, "GET /trusted HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	waitOpen(t, g, 3)
	io.WriteString(keep, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(keep), nil); err != nil {
		t.Fatal(err)
	}
	// The server marks the connection idle (requeues it) only after the
	// client can read the response: wait for it, or the newcomer below may
	// come first and find keep still at the front.
	waitBack(t, g, keep)
	if body, err := get(addr); err != nil || body != "ok" {
		t.Fatalf("request with the budget full: %q %v", body, err)
	}
	if !closedByPeer(untrusted) {
		t.Error("the untrusted request in progress was not evicted")
	}
	for name, c := range map[string]net.Conn{"trusted request": trusted, "requeued keep-alive": keep} {
		if closedByPeer(c) {
			t.Errorf("the %s was evicted", name)
		}
	}
	if g.Evicted() != 1 {
		t.Errorf("evicted %d, want 1", g.Evicted())
	}
}
