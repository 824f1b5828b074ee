package client_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
)

// stallServer is a loopback listener standing for a gateway that fails in
// one way after the connection is made: serve does that to each connection
// and returns once the client gave the connection up. It notes how long
// each connection was held after its stall began: the time the SDK took to
// give it up.
type stallServer struct {
	ln       net.Listener
	serve    func(c net.Conn, br *bufio.Reader, held *time.Time)
	accepted atomic.Int64
	mu       sync.Mutex      // guards held
	held     []time.Duration // per connection: from its stall to the client's close
	wg       sync.WaitGroup
}

func startStall(t *testing.T, serve func(c net.Conn, br *bufio.Reader, held *time.Time)) *stallServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallServer{ln: ln, serve: serve}
	s.wg.Go(s.accept)
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait() // each connection ends once its client closes it
	})
	return s
}

func (s *stallServer) URL() string { return "http://" + s.ln.Addr().String() }

func (s *stallServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.wg.Go(func() {
			defer c.Close()
			since := time.Now()
			s.serve(c, bufio.NewReader(c), &since)
			s.mu.Lock()
			s.held = append(s.held, time.Since(since))
			s.mu.Unlock()
		})
	}
}

// longest is the longest time a connection was held after its stall.
func (s *stallServer) longest() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d time.Duration
	for _, h := range s.held {
		d = max(d, h)
	}
	return d
}

// tick is how often a stalled connection looks whether its client left.
const tick = 20 * time.Millisecond

// untilClosed reads c until its client closes it, calling every (where
// not nil) at each tick meanwhile; a failing every ends it too.
func untilClosed(c net.Conn, br *bufio.Reader, every func() error) {
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(tick))
		_, err := br.Read(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if every != nil && every() != nil {
				return
			}
			continue
		}
		if err != nil {
			return
		}
	}
}

// readRequest reads one request and its body; false where the client left.
func readRequest(br *bufio.Reader) bool {
	r, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, r.Body)
	return err == nil
}

// stalls are the ways a gateway can hold a call after the connection is
// made: a paused process, a node behind a partition, a proxy that stalls.
var stalls = []struct {
	name   string
	warmed bool // it answers a connection's first request, then stalls: the call before warms the pool
	serve  func(c net.Conn, br *bufio.Reader, held *time.Time)
}{
	{"accepts, never answers", false, func(c net.Conn, br *bufio.Reader, _ *time.Time) {
		untilClosed(c, br, nil)
	}},
	{"answers the headers, stalls the body", false, func(c net.Conn, br *bufio.Reader, held *time.Time) {
		if readRequest(br) {
			*held = time.Now()
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{")
			untilClosed(c, br, nil)
		}
	}},
	{"drips the body, a byte a tick", false, func(c net.Conn, br *bufio.Reader, held *time.Time) {
		if readRequest(br) {
			*held = time.Now()
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
			untilClosed(c, br, func() error { _, err := io.WriteString(c, " "); return err })
		}
	}},
	{"a kept-alive connection goes silent", true, func(c net.Conn, br *bufio.Reader, held *time.Time) {
		if !readRequest(br) {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
		if readRequest(br) { // the next call, on the connection the pool kept
			*held = time.Now()
			untilClosed(c, br, nil)
		}
	}},
}

// calls are the kinds of call, each bounded the same way: a read, a
// submission the SDK may send again (its ids), a write it may not.
var calls = []struct {
	name string
	call func(ctx context.Context, c *client.Client) error
}{
	{"read", func(ctx context.Context, c *client.Client) error { _, err := c.Board(ctx, "s"); return err }},
	{"submit", func(ctx context.Context, c *client.Client) error {
		_, err := c.Submit(ctx, "s", client.Score{Member: "m", Score: 1})
		return err
	}},
	{"reset", func(ctx context.Context, c *client.Client) error { return c.Reset(ctx, "s") }},
}

// Every phase of an attempt after the connection is made (the request's
// wait for an answer, the body's read, a kept-alive connection reused) is
// bounded by the attempt's deadline: a call of one attempt ends at it, and
// the SDK closes the stalled connection, whatever the Client's http.Client
// timeout (30 s here).
func TestAttemptEndsAtItsDeadline(t *testing.T) {
	for _, st := range stalls {
		for _, k := range calls {
			t.Run(st.name+"/"+k.name, func(t *testing.T) {
				t.Parallel()
				s := startStall(t, st.serve)
				c, err := client.New([]string{s.URL()}, client.WithToken("x"), client.WithMaxAttempts(1),
					client.WithAttemptTimeouts(attempt, attempt), client.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if st.warmed {
					if err := k.call(ctx, c); err != nil {
						t.Fatalf("the warming call: %v", err)
					}
				}
				t0 := time.Now()
				err = k.call(ctx, c)
				el := time.Since(t0)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("the call answered %v, want the attempt's deadline", err)
				}
				if el > attempt+slack {
					t.Errorf("one attempt took %v, want at most %v + %v", el, attempt, slack)
				}
				if st.warmed && s.accepted.Load() != 1 {
					t.Errorf("%d connections: the stalled call did not reuse the kept one", s.accepted.Load())
				}
				awaitHeld(t, s, 1, attempt+slack)
			})
		}
	}
}

// awaitHeld waits until s has seen n connections closed by the client and
// checks that none was held longer than bound after its stall began.
func awaitHeld(t *testing.T, s *stallServer, n int, bound time.Duration) {
	t.Helper()
	await.For(t, bound+slack, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if got := len(s.held); got < n {
			return fmt.Errorf("%d of %d stalled connections closed by the client", got, n)
		}
		return nil
	})
	if h := s.longest(); h > bound {
		t.Errorf("a stalled connection was held %v after its stall, want at most %v", h, bound)
	}
}

// A call whose first gateway stalls in any of those ways is answered by
// the next within the attempt's deadline plus a little; the stalled
// request, kept in flight for one deadline more where the call may be
// sent again (a late answer may still win), is given up by then.
func TestFailoverPastStalls(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).PutBoard(ctx, "s", client.Settings{Policy: "sum"}); err != nil {
		t.Fatal(err)
	}
	for _, st := range stalls {
		if st.warmed {
			continue // its first answer would make it the Client's first gateway: TestAttemptEndsAtItsDeadline has it
		}
		t.Run(st.name, func(t *testing.T) {
			s := startStall(t, st.serve)
			c := newClient(t, g, s.URL(), g.URL())
			t0 := time.Now()
			res, err := c.Submit(ctx, "s", client.Score{Member: "m", Score: 1})
			if el := time.Since(t0); err != nil || len(res) != 1 || el > attempt+slack {
				t.Fatalf("Submit: %+v %v after %v; want an answer within %v + %v", res, err, el, attempt, slack)
			}
			awaitHeld(t, s, 1, 2*attempt+slack)
		})
	}
}

// A gateway that just failed is tried last by the Client's next calls
// (FailurePenalty): a call that found the first gateway silent and the
// second answering 503 gave up (its attempts capped at two), and the next
// call goes to the third at once instead of waiting out the silent one's
// deadline again, though it is still the list's first and no call has
// answered since.
func TestFailedGatewayTriedLast(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).PutBoard(ctx, "s", client.Settings{Policy: "sum"}); err != nil {
		t.Fatal(err)
	}
	silent := startStall(t, func(c net.Conn, br *bufio.Reader, _ *time.Time) { untilClosed(c, br, nil) })
	busy := startFront(t, g.Addr)
	busy.set(never, unavailable)
	c, err := client.New([]string{silent.URL(), busy.URL, g.URL()}, client.WithToken(g.token("t1", "k1", auth.RoleAdmin)),
		client.WithAttemptTimeouts(attempt, attempt), client.WithMaxAttempts(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, "s", client.Score{Member: "m", Score: 1}); !client.IsCode(err, "unavailable") {
		t.Fatalf("the first call: %v, want the 503 of its second attempt", err)
	}
	t0 := time.Now()
	res, err := c.Submit(ctx, "s", client.Score{Member: "m", Score: 1})
	if el := time.Since(t0); err != nil || res[0].Score != 1 || el >= attempt {
		t.Fatalf("the second call: %+v %v after %v; want the third gateway's answer before one deadline (%v)", res, err, el, attempt)
	}
	if n, b := silent.accepted.Load(), busy.requests.Load(); n != 1 || b != 1 {
		t.Fatalf("the failed gateways got %d and %d requests, want 1 each: the second call went to them first", n, b)
	}
}
