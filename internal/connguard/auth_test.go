package connguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
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
