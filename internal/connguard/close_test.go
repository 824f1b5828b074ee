package connguard

import (
	"net"
	"sync"
	"testing"
)

// pipeListener accepts the server ends of net.Pipe pairs handed to it.
type pipeListener struct {
	conns chan net.Conn
}

func (l *pipeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l *pipeListener) Close() error   { return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

// admitPipes returns n connections admitted by g (whose budget holds them).
func admitPipes(t testing.TB, g *Guard, n int) []net.Conn {
	t.Helper()
	pl := &pipeListener{conns: make(chan net.Conn, n)}
	ln := g.Listener(pl)
	out := make([]net.Conn, n)
	for i := range out {
		srv, cli := net.Pipe()
		t.Cleanup(func() { cli.Close() })
		pl.conns <- srv
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = c
	}
	return out
}

// TestConcurrentClosesLeaveNoWaiter: connections marked waiting and busy
// while they close, from several goroutines at once, all give back their
// place, and none stays in the waiting list (which would let a later
// admission evict a closed connection and count past the budget). Run with
// -race: the close's lock-free path must not race the marking.
func TestConcurrentClosesLeaveNoWaiter(t *testing.T) {
	const n = 2000
	g := New(Options{Budget: n})
	conns := admitPipes(t, g, n)
	if got := g.Open(); got != n {
		t.Fatalf("Open() = %d, want %d", got, n)
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			if i%2 == 0 {
				Busy(c)
			}
			Waiting(c)
		})
		wg.Go(func() { c.Close(); c.Close() })
	}
	wg.Wait()
	if got := g.Open(); got != 0 {
		t.Errorf("Open() = %d after every close, want 0", got)
	}
	g.mu.Lock()
	left := g.waiting.Len()
	g.mu.Unlock()
	if left != 0 {
		t.Errorf("%d closed connections still in the waiting list", left)
	}
	for _, c := range conns {
		if c.(*conn).queued.Load() {
			t.Fatal("a closed connection still marked queued")
		}
	}
}

// TestBusyCloseTakesNoLock: a busy connection (a hijacked WebSocket once
// authenticated) gives back its place while another goroutine holds the
// Guard's mutex: its close never waits for it.
func TestBusyCloseTakesNoLock(t *testing.T) {
	g := New(Options{Budget: 4})
	c := admitPipes(t, g, 1)[0]
	Busy(c)
	g.mu.Lock()
	c.Close() // would deadlock if the busy close took g.mu
	g.mu.Unlock()
	if got := g.Open(); got != 0 {
		t.Errorf("Open() = %d, want 0", got)
	}
}

// BenchmarkMassClose closes b.N busy connections from as many goroutines,
// all at once: a lobby's mass disconnect as the Guard sees it.
func BenchmarkMassClose(b *testing.B) {
	g := New(Options{Budget: b.N + 1})
	conns := admitPipes(b, g, b.N)
	for _, c := range conns {
		Busy(c)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			<-start
			c.Close()
		})
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
}
