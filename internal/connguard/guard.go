// Package connguard keeps a server's open connections within a budget of
// file descriptors, so that connections which hold a descriptor without
// using it (idle keep-alives, clients that send their headers a byte at a
// time) can never keep a client that sends a whole request from being
// served.
//
// A Guard wraps one or more listeners and counts every connection they
// accept until it is closed, hijacked ones (WebSockets) included. When the
// budget is full, a newly accepted connection takes the place of the one
// that has waited longest without a request in progress: a connection in
// http.StateNew or http.StateIdle, never one whose handler runs
// (StateActive) or that was hijacked. Only when no connection can be
// evicted is the newcomer closed instead. The Guard learns the states from
// http.Server.ConnState, which must be set to Guard.ConnState on every
// server that serves a wrapped listener, or to Guard.AuthConnState where
// only the requests a handler vouches for (BusyContext) may not be evicted.
//
// A server may put TLS on top of a wrapped listener (tls.NewListener, or
// http.Server.ServeTLS): ConnState, Waiting and Busy see through a
// *tls.Conn, or any connection with a NetConn method, to the Guard's own
// connection underneath, so that a TLS connection is counted, marked and
// evicted exactly as a plain one. Wrapping the other way round (the Guard
// around a TLS listener) would hide nothing either, but would not count
// a connection until its handshake ended.
//
// # Closing
//
// A connection's close gives back its place without the Guard's mutex when
// it is not among the waiting ones (a WebSocket once hijacked and marked
// busy): the count is atomic, and the close takes the lock only where the
// connection may be in the waiting list. A lobby of thousands of sockets
// that close at once (a network blip, a front end's deploy) then queues no
// goroutine on the Guard: with one mutex, a trace of 15,000 closes showed
// about a thousand goroutines at a time parked on it.
//
// The proof that no closed connection stays in the waiting list, without a
// lock on the close's side: a connection is put in the list only under the
// mutex, after storing queued and then loading closed; a close stores
// closed and then loads queued (Go's atomics are sequentially consistent).
// Of two such store-then-load pairs at least one load sees the other's
// store: either the close sees queued and takes the lock to take it out, or
// the marking sees closed and leaves it out.
//
// The package imports the standard library only.
package connguard

import (
	"container/list"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Guard.
type Options struct {
	// Budget is how many connections the wrapped listeners may hold open
	// together. Zero or less means DefaultBudget().
	Budget int
	// Logger receives one warning per LogEvery at most while the budget is
	// full, with the counts of evicted and refused connections. Nil means
	// discard.
	Logger *slog.Logger
	// LogEvery is the shortest time between two such warnings. Zero means
	// 10 s.
	LogEvery time.Duration
}

// Guard counts the connections of its listeners against a budget. Safe for
// concurrent use; every method is O(1) and takes one mutex briefly, but a
// busy connection's close, which takes none (see the package doc).
type Guard struct {
	budget   int
	log      *slog.Logger
	logEvery time.Duration

	open atomic.Int64 // connections accepted and not yet closed; raised under mu only

	mu      sync.Mutex // guards the fields below, and each conn's elem
	waiting list.List  // *conn with no request in progress, longest waiting first
	lastLog time.Time  // of the last budget warning
	logged  [2]uint64  // evicted, refused at the last warning

	evicted atomic.Uint64
	refused atomic.Uint64
}

// New returns a Guard for opts.
func New(opts Options) *Guard {
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = 10 * time.Second
	}
	return &Guard{budget: opts.Budget, log: opts.Logger, logEvery: opts.LogEvery}
}

// Budget returns the number of connections the Guard allows open at once.
func (g *Guard) Budget() int { return g.budget }

// Open returns the number of connections open now, hijacked ones included.
func (g *Guard) Open() int { return int(g.open.Load()) }

// Evicted returns how many connections without a request in progress were
// closed to make room for a newer one.
func (g *Guard) Evicted() uint64 { return g.evicted.Load() }

// Refused returns how many newly accepted connections were closed at once
// because the budget was full and none could be evicted.
func (g *Guard) Refused() uint64 { return g.refused.Load() }

// Listener wraps ln: its connections count against the Guard's budget.
// Closing the returned listener closes ln.
func (g *Guard) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

// Accept returns the next connection the Guard admits; a connection it
// refuses is closed and never returned.
func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.g.admit(nc); c != nil {
			return c, nil
		}
	}
}

// conn is an admitted connection. elem is guarded by g.mu; queued and
// closed are the two flags of the package doc's proof.
type conn struct {
	net.Conn
	g      *Guard
	elem   *list.Element // in g.waiting while no request is in progress
	queued atomic.Bool   // elem may be set: stored true before a push, under g.mu
	closed atomic.Bool   // released: set once, by the first Close
}

// Close releases the connection's place in the budget and closes it. Safe
// to call more than once and from several goroutines.
func (c *conn) Close() error {
	c.g.release(c)
	return c.Conn.Close()
}

// admit counts nc, evicting the longest-waiting idle connection if the
// budget is full; it returns nil (and has closed nc) where none could be.
func (g *Guard) admit(nc net.Conn) *conn {
	g.mu.Lock()
	var victim *conn
	if g.open.Load() >= int64(g.budget) {
		e := g.waiting.Front()
		if e == nil {
			g.mu.Unlock()
			g.refused.Add(1)
			nc.Close()
			g.warn()
			return nil
		}
		victim = g.waiting.Remove(e).(*conn)
		victim.unqueueLocked()
	}
	c := &conn{Conn: nc, g: g}
	c.queued.Store(true)
	c.elem = g.waiting.PushBack(c)
	g.open.Add(1) // under mu: two admits never both pass the budget check
	g.mu.Unlock()
	if victim != nil {
		g.evicted.Add(1)
		victim.Close()
		g.warn()
	}
	return c
}

// release gives back c's place, once. It takes g.mu only where c may be
// waiting (see the package doc): a busy connection's close is two atomics.
func (g *Guard) release(c *conn) {
	if !c.closed.CompareAndSwap(false, true) {
		return
	}
	g.open.Add(-1)
	if !c.queued.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.elem != nil {
		g.waiting.Remove(c.elem)
		c.unqueueLocked()
	}
}

// queueLocked puts c at the back of the waiting connections unless it is
// there or closed. g.mu held.
func (c *conn) queueLocked() {
	if c.elem != nil {
		return
	}
	c.queued.Store(true) // before the load of closed: see the package doc
	if c.closed.Load() {
		c.queued.Store(false)
		return
	}
	c.elem = c.g.waiting.PushBack(c)
}

// unqueueLocked forgets c's place in the waiting list, which the caller has
// removed it from. g.mu held.
func (c *conn) unqueueLocked() {
	c.elem = nil
	c.queued.Store(false)
}

// ConnState tracks which connections have a request in progress. Set it as
// the http.Server's ConnState (or call it from that hook) on every server
// that serves one of the Guard's listeners. Connections of other listeners
// are ignored.
func (g *Guard) ConnState(nc net.Conn, st http.ConnState) {
	c, ok := own(nc)
	if !ok || c.g != g {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch st {
	case http.StateNew, http.StateIdle:
		// Waiting for a request: evictable, behind those waiting longer.
		c.queueLocked()
	case http.StateActive, http.StateHijacked:
		// A handler runs, or the connection is no longer HTTP's: never
		// evicted; a hijacked one still counts until closed.
		if c.elem != nil {
			g.waiting.Remove(c.elem)
			c.unqueueLocked()
		}
	}
}

// AuthConnState is ConnState for a server whose handlers say which
// requests they trust: a connection with a request in progress stays
// evictable, where it waited, until a handler calls BusyContext for it
// (the gateway's API does once the request's token is verified). So only
// an authenticated request holds a connection the budget cannot take
// back; a request of a client without a token, on any path, can be
// evicted. Between requests a connection waits again, from the back of
// the queue. Hijacked connections are as in ConnState. The server's
// ConnContext must be ConnContext, so that BusyContext finds the
// connection. O(1).
func (g *Guard) AuthConnState(nc net.Conn, st http.ConnState) {
	switch st {
	case http.StateActive:
		return // still waiting, where it was, until BusyContext
	case http.StateIdle:
		g.requeue(nc)
		return
	}
	g.ConnState(nc, st)
}

// requeue puts nc at the back of the waiting connections, whether it was
// among them or not.
func (g *Guard) requeue(nc net.Conn) {
	c, ok := own(nc)
	if !ok || c.g != g {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.elem == nil {
		c.queueLocked()
		return
	}
	g.waiting.MoveToBack(c.elem)
}

type connKey struct{}

// ConnContext returns ctx carrying nc, for BusyContext. Set it as the
// http.Server's ConnContext next to AuthConnState.
func ConnContext(ctx context.Context, nc net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, nc)
}

// BusyContext marks the connection of the request whose context ctx is
// (see ConnContext) as never to be evicted, until its request ends. A
// context without a connection is ignored. O(1).
func BusyContext(ctx context.Context) {
	if nc, ok := ctx.Value(connKey{}).(net.Conn); ok {
		Busy(nc)
	}
}

// Waiting marks nc, a hijacked connection of a Guard's listener, as one
// that may be evicted like an idle one: it holds a descriptor while waiting
// for its client to prove anything (a WebSocket waiting for its first auth
// message). Busy ends that. Other connections are ignored. O(1).
func Waiting(nc net.Conn) { mark(nc, true) }

// Busy marks nc as never to be evicted (a WebSocket once authenticated),
// undoing Waiting. O(1).
func Busy(nc net.Conn) { mark(nc, false) }

func mark(nc net.Conn, waiting bool) {
	c, ok := own(nc)
	if !ok {
		return
	}
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case waiting:
		c.queueLocked()
	case c.elem != nil:
		g.waiting.Remove(c.elem)
		c.unqueueLocked()
	}
}

// netConner is a connection layered on another: *tls.Conn.
type netConner interface{ NetConn() net.Conn }

// maxLayers bounds own's unwrapping, against a NetConn that returns its
// own receiver.
const maxLayers = 4

// own returns the Guard's connection under nc: nc itself, or what its
// NetConn methods lead to (a *tls.Conn over a guarded connection).
func own(nc net.Conn) (*conn, bool) {
	for range maxLayers {
		switch v := nc.(type) {
		case *conn:
			return v, true
		case netConner:
			nc = v.NetConn()
		default:
			return nil, false
		}
	}
	return nil, false
}

// warn logs the eviction and refusal counts, at most once per logEvery.
func (g *Guard) warn() {
	now := time.Now()
	g.mu.Lock()
	if now.Sub(g.lastLog) < g.logEvery {
		g.mu.Unlock()
		return
	}
	ev, rf := g.evicted.Load(), g.refused.Load()
	dev, drf := ev-g.logged[0], rf-g.logged[1]
	g.lastLog, g.logged = now, [2]uint64{ev, rf}
	open := g.open.Load()
	g.mu.Unlock()
	g.log.Warn("connection budget full: closing connections without a request in progress",
		"evicted", dev, "refused", drf, "open", open, "budget", g.budget)
}
