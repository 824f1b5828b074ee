package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
)

// attempt is the tests' per-attempt deadline; slack is what a loaded
// machine may add to a call that fails over once.
const (
	attempt = 400 * time.Millisecond
	slack   = 2 * time.Second
)

// startPair starts two gateways sharing one NATS server, with the sum
// board "s" of tenant t1 served by both.
func startPair(t *testing.T) (a, b *gateway) {
	t.Helper()
	nats := startNATS(t)
	a, b = startGatewayOn(t, nats), startGatewayOn(t, nats)
	ctx := context.Background()
	if _, err := b.client(t, "t1", "k1", auth.RoleAdmin).PutBoard(ctx, "s", client.Settings{Policy: "sum"}); err != nil {
		t.Fatal(err)
	}
	await.For(t, 10*time.Second, func() error {
		_, err := a.client(t, "t1", "k1", auth.RoleAdmin).Board(ctx, "s")
		return err
	})
	return a, b
}

// newClient is a client of the given gateway URLs with the tests' deadlines.
func newClient(t *testing.T, g *gateway, urls ...string) *client.Client {
	t.Helper()
	c, err := client.New(urls, client.WithToken(g.token("t1", "k1", auth.RoleAdmin)), client.WithAttemptTimeouts(attempt, attempt))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// awaitScore waits until member's score on g's board "s" is want.
func awaitScore(t *testing.T, g *gateway, member string, want float64) {
	t.Helper()
	c := g.client(t, "t1", "k1", auth.RoleRead)
	await.For(t, 10*time.Second, func() error {
		row, err := c.Member(context.Background(), "s", member, client.Window{})
		if err != nil || row.Score != want {
			return fmt.Errorf("%s on %s: %+v %v, want score %v", member, g.Addr, row, err, want)
		}
		return nil
	})
}

// writeFault is a way for gateway a to fail a write.
type writeFault struct {
	name    string
	id      string // the caller's id; empty: the SDK's
	dup     bool   // the result says duplicate
	faultyA func(t *testing.T) string
}

// writeFaults are the ways a fails: paused, its answer lost, 503 after or
// before it stored the write.
func writeFaults(a *gateway) []writeFault {
	return []writeFault{
		{"paused: nothing gets through", "", false, func(t *testing.T) string {
			p := startProxy(t, a.Addr)
			p.hold(up)
			p.hold(down)
			return p.URL()
		}},
		{"answer lost: stored on A, no reply", "", false, func(t *testing.T) string {
			p := startProxy(t, a.Addr)
			p.hold(down)
			return p.URL()
		}},
		{"answer lost, the caller's id", "round-1", true, func(t *testing.T) string {
			p := startProxy(t, a.Addr)
			p.hold(down)
			return p.URL()
		}},
		{"503 after storing", "", false, func(t *testing.T) string {
			f := startFront(t, a.Addr)
			f.set(nil, unavailable)
			return f.URL
		}},
		{"503 before storing", "", false, func(t *testing.T) string {
			f := startFront(t, a.Addr)
			f.set(never, unavailable)
			return f.URL
		}},
	}
}

// A write to a gateway that hangs or answers 503 lands on the other within
// the attempt's deadline plus a little, and applies once even where the
// first gateway stored it: the retry carries the same id. The next call
// starts at the gateway that answered.
func TestWriteFailover(t *testing.T) {
	a, b := startPair(t)
	cases := writeFaults(a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			member := fmt.Sprintf("m%d", i)
			c := newClient(t, a, tc.faultyA(t), b.URL())
			t0 := time.Now()
			res, err := c.Submit(ctx, "s", client.Score{Member: member, Score: 5, ID: tc.id})
			el := time.Since(t0)
			t.Logf("the write took %v", el)
			if el > attempt+slack {
				t.Errorf("the write took %v, want under %v", el, attempt+slack)
			}
			if err != nil || len(res) != 1 || res[0].Score != 5 || res[0].Duplicate != tc.dup {
				t.Fatalf("Submit: %+v %v; want score 5 (once), duplicate %v", res, err, tc.dup)
			}
			t0 = time.Now()
			if res, err = c.Submit(ctx, "s", client.Score{Member: member, Score: 1}); err != nil || res[0].Score != 6 {
				t.Fatalf("a second write: %+v %v, want score 6", res, err)
			}
			if el := time.Since(t0); el >= attempt {
				t.Errorf("the second write took %v: it did not start at the gateway that answered", el)
			}
			awaitScore(t, a, member, 6)
			awaitScore(t, b, member, 6)
		})
	}
}

// A read of a paused gateway moves to the other within its deadline.
func TestReadFailover(t *testing.T) {
	a, b := startPair(t)
	p := startProxy(t, a.Addr)
	p.hold(up)
	c := newClient(t, a, p.URL(), b.URL())
	t0 := time.Now()
	if _, err := c.Top(context.Background(), "s", client.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > attempt+slack {
		t.Errorf("the read took %v, want under %v", el, attempt+slack)
	}
}

// What is not sent again: a 4xx (but a 429 with Retry-After), and a write
// that may not be repeated (reset) once it may have arrived. A budget that
// runs out answers the deadline with the last attempt's error.
func TestWhatIsNotRetried(t *testing.T) {
	a, b := startPair(t)
	ctx := context.Background()
	fa, fb := startFront(t, a.Addr), startFront(t, b.Addr)
	c := newClient(t, a, fa.URL, fb.URL)
	if _, err := c.Board(ctx, "nope"); !client.IsCode(err, "not_found") || fa.requests.Load() != 1 || fb.requests.Load() != 0 {
		t.Fatalf("a 404: %v, requests %d and %d; want 1 and 0", err, fa.requests.Load(), fb.requests.Load())
	}

	fa.set(never, unavailable)
	if err := c.Reset(ctx, "s"); !client.IsCode(err, "unavailable") || fb.requests.Load() != 0 {
		t.Fatalf("a reset answered 503: %v, %d requests to the other; want the 503 and none", err, fb.requests.Load())
	}

	once, err := client.New([]string{fa.URL, fb.URL}, client.WithToken(a.token("t1", "k1", auth.RoleRead)), client.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := once.Top(ctx, "s", client.ReadOptions{}); !client.IsCode(err, "unavailable") || fb.requests.Load() != 0 {
		t.Fatalf("a read with WithMaxAttempts(1) answered 503: %v, %d requests to the other; want the 503 and none", err, fb.requests.Load())
	}

	single := newClient(t, a, fb.URL)
	fb.set(func(n int64) bool { return n > 1 }, func(w http.ResponseWriter, n int64) bool {
		if n > 1 {
			return false
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"code":"rate_limited","message":"slow down"}}`)
		return true
	})
	t0 := time.Now()
	_, err = single.Top(ctx, "s", client.ReadOptions{})
	if err != nil || fb.requests.Load() != 2 || time.Since(t0) < time.Second {
		t.Fatalf("429 with Retry-After 1: %v after %d requests in %v; want the read a second later", err, fb.requests.Load(), time.Since(t0))
	}
	fb.set(never, func(w http.ResponseWriter, _ int64) bool {
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"code":"rate_limited","message":"boards: the tenant has 10 boards, its limit"}}`)
		return true
	})
	fb.requests.Store(0)
	if _, err := single.PutBoard(ctx, "x", client.Settings{}); !client.IsCode(err, "rate_limited") || fb.requests.Load() != 1 {
		t.Fatalf("429 without Retry-After: %v after %d requests; want it at once", err, fb.requests.Load())
	}

	fb.set(never, unavailable)
	bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = single.Top(bctx, "s", client.ReadOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || !client.IsCode(err, "unavailable") {
		t.Fatalf("a read of a gateway that answers 503 until the budget ends: %v", err)
	}
}

// A Watch keeps a quiet connection (its pings are answered) and leaves a
// silent one: with its gateway paused it resumes on the other within the
// read timeout plus a little, and the states it yields go on in seq order
// to the board as it is.
func TestWatchFailover(t *testing.T) {
	a, b := startPair(t)
	const bound = 600 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := b.client(t, "t1", "k1", auth.RoleAdmin)
	if _, err := admin.Submit(ctx, "s", client.Score{Member: "a", Score: 1}); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, a.Addr)
	reader := newClient(t, a, p.URL(), b.URL())
	w := startWatcher(ctx, t, reader, client.WatchReadTimeout(bound), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond))
	wait := w.waitTop
	wait("the first state", "a")
	// Nothing changes for three read timeouts: the pongs keep the one
	// connection. Time passing is the condition itself here.
	time.Sleep(3 * bound)
	if n := p.accepted.Load(); n != 1 {
		t.Fatalf("a quiet view made %d connections, want 1", n)
	}
	if _, err := admin.Submit(ctx, "s", client.Score{Member: "b", Score: 2}); err != nil {
		t.Fatal(err)
	}
	wait("b on top, through the first gateway", "b")

	p.hold(up)
	p.hold(down)
	t0 := time.Now()
	if _, err := admin.Submit(ctx, "s", client.Score{Member: "c", Score: 3}); err != nil {
		t.Fatal(err)
	}
	st := wait("c on top, after the first gateway went silent", "c")
	el := time.Since(t0)
	t.Logf("the watch resumed on the other gateway after %v", el)
	if el > bound+slack {
		t.Errorf("the watch resumed after %v, want under %v", el, bound+slack)
	}
	if len(st.Rows) != 3 || st.Total != 3 || st.Rows[2].Member != "a" {
		t.Fatalf("after the move: %+v", st)
	}
	for i := 1; i < len(w.seqs); i++ {
		if w.seqs[i] <= w.seqs[i-1] {
			t.Fatalf("seqs out of order: %v", w.seqs)
		}
	}
}

// watcher runs a Watch of board "s" on a goroutine of its own (ended by
// the test's ctx) and hands its states to the test.
type watcher struct {
	t      *testing.T
	ctx    context.Context
	states chan client.ViewState
	errc   chan error
	seqs   []uint64           // every state's seq seen, in order
	all    []client.ViewState // every state seen, in order
}

func startWatcher(ctx context.Context, t *testing.T, c *client.Client, opts ...client.WatchOption) *watcher {
	w := &watcher{t: t, ctx: ctx, states: make(chan client.ViewState, 100), errc: make(chan error, 1)}
	go func() {
		for st, err := range c.Watch(ctx, "s", client.Top(10), opts...) {
			if err != nil {
				w.errc <- err
				return
			}
			w.states <- st
		}
	}()
	return w
}

// waitTop returns the first state with top on top, failing the test if
// the watch ends or ctx does first.
func (w *watcher) waitTop(what, top string) client.ViewState {
	w.t.Helper()
	for {
		select {
		case st := <-w.states:
			w.seqs, w.all = append(w.seqs, st.Seq), append(w.all, st)
			if len(st.Rows) > 0 && st.Rows[0].Member == top {
				return st
			}
		case err := <-w.errc:
			w.t.Fatalf("%s: the watch ended: %v", what, err)
		case <-w.ctx.Done():
			w.t.Fatalf("%s: not seen", what)
		}
	}
}

// waitScore returns the first state with top on top at score, failing
// the test if the watch ends or ctx does first.
func (w *watcher) waitScore(what, top string, score float64) client.ViewState {
	w.t.Helper()
	for {
		st := w.waitTop(what, top)
		if st.Rows[0].Score == score {
			return st
		}
	}
}

// After an attempt ran out of time the next gets twice as long: a write
// that is slow everywhere (a leader election) is answered by the second
// gateway rather than abandoned there too.
func TestDeadlineDoublesAfterATimeout(t *testing.T) {
	a, b := startPair(t)
	p := startProxy(t, a.Addr)
	p.hold(up)
	fb := startFront(t, b.Addr)
	fb.set(func(int64) bool {
		time.Sleep(attempt * 3 / 2) // the slowness simulated: past one deadline, within two
		return true
	}, nil)
	c := newClient(t, a, p.URL(), fb.URL)
	res, err := c.Submit(context.Background(), "s", client.Score{Member: "slow", Score: 1})
	if err != nil || res[0].Score != 1 || fb.requests.Load() != 1 {
		t.Fatalf("Submit: %+v %v after %d requests to the slow gateway; want it answered by the first", res, err, fb.requests.Load())
	}
}

// A gateway that answers just past the attempt's deadline (its write
// waited for a leader election) still answers the call while the next
// attempt waits on a paused gateway: the late request is not cancelled, so
// the call costs neither the paused gateway's deadline nor a second request.
func TestLateAnswerWinsOverPausedGateway(t *testing.T) {
	a, b := startPair(t)
	p := startProxy(t, a.Addr)
	p.hold(up)
	fb := startFront(t, b.Addr)
	fb.set(func(int64) bool {
		time.Sleep(attempt * 3 / 2) // past its deadline, well within the paused gateway's
		return true
	}, nil)
	c := newClient(t, a, fb.URL, p.URL())
	res, err := c.Submit(context.Background(), "s", client.Score{Member: "late", Score: 1})
	if err != nil || res[0].Score != 1 || fb.requests.Load() != 1 {
		t.Fatalf("Submit: %+v %v after %d requests to the slow gateway; want its first answer", res, err, fb.requests.Load())
	}
	awaitScore(t, b, "late", 1)
}

// A caller that takes longer than the read timeout over a state keeps its
// connection: nothing is read meanwhile, so the deadline waits for it.
func TestSlowCallerKeepsItsConnection(t *testing.T) {
	g := startGateway(t)
	const bound = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := g.client(t, "t1", "k1", auth.RoleAdmin)
	if _, err := admin.PutBoard(ctx, "s", client.Settings{}); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, g.Addr)
	reader := newClient(t, g, p.URL())
	n := 0
	for st, err := range reader.Watch(ctx, "s", client.Top(10), client.WatchReadTimeout(bound)) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1 {
			time.Sleep(3 * bound) // the caller's slowness, simulated
			if _, err := admin.Submit(ctx, "s", client.Score{Member: "a", Score: 1}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if len(st.Rows) == 1 {
			break
		}
	}
	if c := p.accepted.Load(); c != 1 {
		t.Fatalf("a slow caller made %d connections, want 1", c)
	}
}
