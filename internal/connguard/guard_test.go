package connguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// serve starts an HTTP server on a guarded loopback listener with budget
// and handler, stopped at cleanup, and returns the Guard and the address.
func serve(t *testing.T, budget int, h http.Handler) (*Guard, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Budget: budget})
	srv := &http.Server{Handler: h, ConnState: g.ConnState, ReadHeaderTimeout: time.Minute}
	go srv.Serve(g.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return g, ln.Addr().String()
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })

// dial opens a raw connection, closed at cleanup.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends one request on a new connection and returns the body.
func get(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// closedByPeer reports whether the server closed c: a read sees EOF or a
// reset rather than a timeout.
func closedByPeer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// waitOpen waits until the Guard counts n open connections.
func waitOpen(t *testing.T, g *Guard, n int) {
	t.Helper()
	await.For(t, 5*time.Second, func() error {
		if got := g.Open(); got != n {
			return fmt.Errorf("open %d, want %d", got, n)
		}
		return nil
	})
}

// TestIdleEvictedForNewcomer: with the budget full of connections that sent
// nothing and of keep-alive connections between requests, a new request is
// served, and the connection that waited longest is the one closed.
func TestIdleEvictedForNewcomer(t *testing.T) {
	g, addr := serve(t, 4, ok)
	silent := []net.Conn{dial(t, addr), dial(t, addr)}
	waitOpen(t, g, 2)
	keep := dial(t, addr) // a keep-alive connection after one request: StateIdle
	io.WriteString(keep, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(keep), nil); err != nil {
		t.Fatal(err)
	}
	slow := dial(t, addr) // slowloris: half a request line
	io.WriteString(slow, "GET / HT")
	waitOpen(t, g, 4)
	if body, err := get(addr); err != nil || body != "ok" {
		t.Fatalf("request with the budget full: %q %v", body, err)
	}
	if !closedByPeer(silent[0]) {
		t.Error("the longest-waiting connection was not evicted")
	}
	for i, c := range []net.Conn{silent[1], keep, slow} {
		if closedByPeer(c) {
			t.Errorf("connection %d closed: only the longest-waiting one should be", i+1)
		}
	}
	if g.Evicted() != 1 || g.Refused() != 0 {
		t.Errorf("evicted %d refused %d", g.Evicted(), g.Refused())
	}
	for i := range 5 { // more newcomers each take a waiting connection's place
		if body, err := get(addr); err != nil || body != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
		if n := g.Open(); n > 4 {
			t.Fatalf("%d open over a budget of 4", n)
		}
	}
}

// TestSlowlorisEvicted: connections sending headers a byte at a time never
// hold the budget against a full request.
func TestSlowlorisEvicted(t *testing.T) {
	g, addr := serve(t, 8, ok)
	var slow []net.Conn
	for range 8 {
		c := dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nX-A: ")
		slow = append(slow, c)
	}
	waitOpen(t, g, 8)
	for _, c := range slow { // one more header byte each: still not a request
		io.WriteString(c, "a")
	}
	if body, err := get(addr); err != nil || body != "ok" {
		t.Fatalf("request among slowloris connections: %q %v", body, err)
	}
	if g.Evicted() != 1 {
		t.Errorf("evicted %d, want 1", g.Evicted())
	}
}

// TestActiveNeverEvicted: connections whose handler runs are not closed to
// make room; the newcomer is refused instead, and served once a handler
// finishes.
func TestActiveNeverEvicted(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	g, addr := serve(t, 2, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		started <- struct{}{}
		<-release
		io.WriteString(w, "late")
	}))
	busy := []net.Conn{dial(t, addr), dial(t, addr)}
	for _, c := range busy {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	<-started
	<-started
	if _, err := get(addr); err == nil {
		t.Fatal("a request was served with every slot held by a running handler")
	}
	if g.Refused() == 0 || g.Evicted() != 0 {
		t.Fatalf("refused %d evicted %d", g.Refused(), g.Evicted())
	}
	close(release)
	for _, c := range busy {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a running handler's connection was closed: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "late" {
			t.Fatalf("body %q", b)
		}
	}
	if body, err := get(addr); err != nil || body != "late" {
		t.Fatalf("after the handlers finished: %q %v", body, err)
	}
}

// TestHijackedCountedNotEvicted: a hijacked connection (a WebSocket) keeps
// its place until it is closed, and is never evicted.
func TestHijackedCountedNotEvicted(t *testing.T) {
	hijacked := make(chan net.Conn, 1)
	g, addr := serve(t, 2, hijackAt(t, hijacked, nil))
	ws := dial(t, addr)
	io.WriteString(ws, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	server := <-hijacked
	idle := dial(t, addr)
	waitOpen(t, g, 2)
	if body, err := get(addr); err != nil || body != "ok" {
		t.Fatalf("request: %q %v", body, err)
	}
	if !closedByPeer(idle) {
		t.Error("the idle connection was not the one evicted")
	}
	if _, err := server.Write([]byte("still here")); err != nil {
		t.Fatalf("hijacked connection closed: %v", err)
	}
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, len("still here"))
	if _, err := io.ReadFull(ws, b); err != nil || string(b) != "still here" {
		t.Fatalf("hijacked connection reads %q %v", b, err)
	}
	server.Close()
	server.Close() // twice: counted once
	waitOpen(t, g, 0)
}

func TestBudgetFor(t *testing.T) {
	for _, c := range []struct{ limit, want int }{
		{1024, 896}, {10_000, 9_000}, {1 << 20, 943_719}, {100, 16}, {0, fallbackBudget}, {-1, fallbackBudget},
	} {
		if got := budgetFor(c.limit); got != c.want {
			t.Errorf("budgetFor(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
	if b := DefaultBudget(); b < 16 || (limit() > 0 && b >= limit()) {
		t.Errorf("DefaultBudget() = %d with a limit of %d", b, limit())
	}
}

// TestWaitingHijackedEvicted: a hijacked connection marked Waiting (a
// WebSocket before its auth message) is evicted like an idle one; once
// marked Busy it is not.
func TestWaitingHijackedEvicted(t *testing.T) {
	hijacked := make(chan net.Conn, 2)
	_, addr := serve(t, 2, hijackAt(t, hijacked, Waiting))
	waiting := dial(t, addr)
	io.WriteString(waiting, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	<-hijacked
	authed := dial(t, addr)
	io.WriteString(authed, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	Busy(<-hijacked)
	if body, err := get(addr); err != nil || body != "ok" {
		t.Fatalf("request: %q %v", body, err)
	}
	if !closedByPeer(waiting) {
		t.Error("the waiting hijacked connection was not evicted")
	}
	if closedByPeer(authed) {
		t.Error("the busy hijacked connection was evicted")
	}
	Waiting(dial(t, addr)) // not the guard's: ignored
}

// TestPassesThroughTCP: a guarded connection keeps the *net.TCPConn
// methods that net/http and the WebSocket writer use: the raw descriptor,
// half-close, ReadFrom.
func TestPassesThroughTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Budget: 4})
	gl := g.Listener(ln)
	defer gl.Close()
	client := dial(t, ln.Addr().String())
	server, err := gl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	sc, ok := server.(syscall.Conn)
	if !ok {
		t.Fatal("no syscall.Conn")
	}
	if _, err := sc.SyscallConn(); err != nil {
		t.Fatalf("SyscallConn: %v", err)
	}
	if _, err := server.(io.ReaderFrom).ReadFrom(strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	if err := server.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(client); err != nil || string(b) != "hello" {
		t.Fatalf("client reads %q %v; want hello then EOF from the half-close", b, err)
	}
	if g.Open() != 1 {
		t.Fatalf("open %d", g.Open())
	}
}

// hijackAt answers "ok", except on /hijack, where it hijacks the
// connection, hands it to mark (where not nil) and sends it on hijacked.
func hijackAt(t *testing.T, hijacked chan<- net.Conn, mark func(net.Conn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hijack" {
			io.WriteString(w, "ok")
			return
		}
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		if mark != nil {
			mark(c)
		}
		hijacked <- c
	})
}
