package client_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
)

// zombieProxy forwards TCP connections to target until freeze: from then
// on the connections it holds pass nothing either way and are never
// closed, as a flow a middlebox forgot or a peer host gone, while new
// connections are forwarded as before.
type zombieProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex // guards frozen and conns
	frozen map[net.Conn]bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startZombieProxy(t *testing.T, target string) *zombieProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &zombieProxy{ln: ln, target: target, frozen: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *zombieProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(c, up) })
		p.wg.Go(func() { p.pipe(up, c) })
	}
}

// pipe copies src to dst, dropping what src sends once src is frozen.
func (p *zombieProxy) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		frozen := p.frozen[src]
		p.mu.Unlock()
		if n > 0 && !frozen {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// freeze makes every connection held now a zombie.
func (p *zombieProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		p.frozen[c] = true
	}
}

// An HTTP/2 connection whose peer went silent is closed by the default
// transport's pings (DeadConnection), so a call after that dials anew and
// is answered; without them the connection would carry every later
// request, each ending only at the attempt's deadline (only its stream is
// cancelled), until TCP gives up minutes later.
func TestDeadHTTP2ConnectionIsClosed(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2", http.StatusHTTPVersionNotSupported)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p := startZombieProxy(t, srv.Listener.Addr().String())
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	c, err := client.New([]string{"https://" + p.ln.Addr().String()}, client.WithToken("x"), client.WithMaxAttempts(1),
		client.WithAttemptTimeouts(attempt, attempt), client.WithDefaultTransportTrusting(roots))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Board(ctx, "s"); err != nil {
		t.Fatalf("over HTTP/2 before the freeze: %v", err)
	}
	p.freeze()
	frozen := time.Now()
	if _, err := c.Board(ctx, "s"); err == nil {
		t.Fatal("a call on the frozen connection was answered")
	}
	// Each failing call lasts one attempt's deadline on the dead connection.
	await.For(t, client.DeadConnection+slack-time.Since(frozen), func() error {
		_, err := c.Board(ctx, "s")
		return err
	})
	t.Logf("answered again %v after the connection went silent", time.Since(frozen).Round(time.Millisecond))
}
