package connguard

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"
)

// serveTLS is serve with TLS on top of the guarded listener, as the
// gateway's --tls-cert does it.
func serveTLS(t *testing.T, budget int, h http.Handler) (*Guard, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Budget: budget})
	srv := &http.Server{Handler: h, ConnState: g.ConnState, ReadHeaderTimeout: time.Minute,
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	go srv.Serve(tls.NewListener(g.Listener(ln), &tls.Config{Certificates: []tls.Certificate{testCert(t)}}))
	t.Cleanup(func() { srv.Close() })
	return g, ln.Addr().String()
}

// testCert returns a throwaway self-signed certificate.
func testCert(t *testing.T) tls.Certificate {
	t.Helper()
	sk, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &sk.PublicKey, sk)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: sk}
}

// dialTLS opens a TLS connection and completes its handshake.
func dialTLS(t *testing.T, addr string) *tls.Conn {
	t.Helper()
	c := tls.Client(dial(t, addr), &tls.Config{InsecureSkipVerify: true})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Time{})
	return c
}

// getTLS sends one request on a new TLS connection and reports whether it
// was answered.
func getTLS(t *testing.T, addr string) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// TestTLSSeenThrough (issue 21 item 4): under TLS, the Guard recognises its
// connections through the *tls.Conn that net/http and a hijacking handler
// hold. With the budget full of a busy hijacked TLS connection (an
// authenticated WebSocket) and one waiting hijacked TLS connection, a new
// TLS request evicts the waiting one, never the busy one; once only busy
// connections remain, a newcomer is refused and the busy ones live on.
// Before the Guard looked through *tls.Conn, ConnState and Busy ignored
// TLS connections and left every one of them evictable.
func TestTLSSeenThrough(t *testing.T) {
	hijacked := make(chan net.Conn, 2)
	g, addr := serveTLS(t, 2, hijackAt(t, hijacked, Waiting))
	busy := dialTLS(t, addr)
	busy.Write([]byte("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"))
	server := <-hijacked
	if _, ok := server.(*tls.Conn); !ok {
		t.Fatalf("hijacked a %T, want a *tls.Conn", server)
	}
	Busy(server)
	waiting := dialTLS(t, addr)
	waiting.Write([]byte("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"))
	<-hijacked
	waitOpen(t, g, 2)
	if err := getTLS(t, addr); err != nil {
		t.Fatalf("request with the budget full: %v", err)
	}
	if !closedByPeer(waiting) {
		t.Error("the waiting TLS connection was not evicted")
	}
	waitOpen(t, g, 1)         // the newcomer asked to close
	busy2 := dialTLS(t, addr) // a second busy one fills the budget
	busy2.Write([]byte("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"))
	Busy(<-hijacked)
	waitOpen(t, g, 2)
	if err := getTLS(t, addr); err == nil {
		t.Error("a newcomer was served with the budget held by busy TLS connections")
	}
	for i, c := range []*tls.Conn{busy, busy2} {
		if closedByPeer(c) {
			t.Errorf("busy TLS connection %d was closed", i+1)
		}
	}
	if _, err := server.Write([]byte("still here")); err != nil {
		t.Fatalf("busy TLS connection closed: %v", err)
	}
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, len("still here"))
	if _, err := io.ReadFull(busy, b); err != nil || string(b) != "still here" {
		t.Fatalf("busy TLS connection reads %q %v", b, err)
	}
	if g.Refused() == 0 {
		t.Error("no newcomer refused")
	}
	if g.Evicted() != 1 {
		t.Errorf("evicted %d, want 1", g.Evicted())
	}
}
