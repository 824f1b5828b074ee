package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
)

// DefaultMaxConnections is a tenant's WebSocket connection cap when neither
// its key file entry nor Config.MaxConnections sets one.
const DefaultMaxConnections = 20_000

// MaxSubscriptions is the most subscriptions one connection holds.
const MaxSubscriptions = 100

// live is the WebSocket side of a Server: the subscriptions engine fed by
// the hub's change feed, the open connections and their per-tenant counts.
// Safe for concurrent use.
type live struct {
	s       *Server
	eng     *subscriptions.Engine
	pool    *writerPool
	metrics *wsMetrics
	origins []string
	authTO  time.Duration
	slowTO  time.Duration
	pingTO  time.Duration
	maxConn int
	// msgRate and msgBurst bound a connection's client messages: see
	// MessageRate. Fields, so that tests may lower them.
	msgRate, msgBurst int
	refusals          *refusalLog

	wg sync.WaitGroup // one per connection's goroutine

	mu      sync.Mutex // guards the fields below
	conns   map[*wsConn]struct{}
	tenants map[string]int
	closing bool
}

func newLive(s *Server) *live {
	c := s.cfg
	l := &live{
		s: s, eng: subscriptions.NewEngine(subscriptions.Config{}), origins: c.AllowedOrigins,
		authTO: orDefault(c.AuthTimeout, 5*time.Second), slowTO: orDefault(c.SlowTimeout, 10*time.Second),
		pingTO: orDefault(c.PingInterval, 30*time.Second), maxConn: c.MaxConnections,
		msgRate: MessageRate, msgBurst: MessageBurst, refusals: newRefusalLog(s.log, "websocket refused"),
		conns: map[*wsConn]struct{}{}, tenants: map[string]int{},
	}
	if l.maxConn <= 0 {
		l.maxConn = DefaultMaxConnections
	}
	warnOpenOrigins(s.log, c.AllowedOrigins)
	l.metrics = newWSMetrics(c.Registry, l.eng)
	l.pool = newWriterPool(l.metrics)
	c.Hub.SetFeed(&liveFeed{l: l})
	return l
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// connCap returns tenant's connection cap.
func (l *live) connCap(tenant string) int {
	if keys := l.s.keyring(); keys != nil {
		if lim, ok := keys.Limits(tenant); ok && lim.Connections > 0 {
			return lim.Connections
		}
	}
	return l.maxConn
}

// admit counts a connection of tenant, or reports false at the cap or
// while closing. O(1).
func (l *live) admit(tenant string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing || l.tenants[tenant] >= l.connCap(tenant) {
		return false
	}
	l.tenants[tenant]++
	return true
}

func (l *live) release(tenant string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tenants[tenant]--; l.tenants[tenant] <= 0 {
		delete(l.tenants, tenant)
	}
}

// track registers c for CloseWebSockets, or reports false while closing.
func (l *live) track(c *wsConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	l.conns[c] = struct{}{}
	l.wg.Add(1)
	l.pool.start()
	return true
}

func (l *live) untrack(c *wsConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	l.wg.Done()
}

// CloseWebSockets closes every WebSocket with 1001 (going away) and refuses
// new ones, waiting until their goroutines returned or ctx ends, when it
// drops the rest without a close handshake; then it stops the writers.
// http.Server.Shutdown does not close hijacked connections: the gateway
// calls this next to it. Safe to call more than once.
func (s *Server) CloseWebSockets(ctx context.Context) error {
	l := s.live
	l.mu.Lock()
	l.closing = true
	conns := make([]*wsConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		go c.close(newClose(closeGoingAway, "server shutting down"))
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		l.pool.close()
		return nil
	case <-ctx.Done():
		for _, c := range conns { // ends their goroutines
			c.ws.CloseNow()
		}
		<-done
		l.pool.close()
		return ctx.Err()
	}
}

// liveFeed is the hub's change feed consumer: it hands each tick's batches
// to the engine and times the tick.
type liveFeed struct {
	l     *live
	start time.Time // first Apply of the current tick; feed goroutine only
}

// Apply runs under the tenant's read lock: see hub.Feed.
func (f *liveFeed) Apply(b hub.FeedBatch, w hub.Window) {
	if f.start.IsZero() {
		f.start = time.Now()
	}
	changes := make([]subscriptions.Change, len(b.Changes))
	for i, c := range b.Changes {
		changes[i] = subscriptions.Change(c)
	}
	key := subscriptions.Key{Tenant: b.Tenant, Board: b.Board, Window: b.Window}
	f.l.eng.Apply(key, liveWindow{w}, changes, b.Reset)
}

// Flush runs with no lock: see hub.Feed.
func (f *liveFeed) Flush() {
	f.l.eng.Flush()
	if !f.start.IsZero() {
		f.l.metrics.tick.Observe(time.Since(f.start).Seconds())
	}
	f.start = time.Time{}
}

// liveWindow adapts hub.Window to subscriptions.Window.
type liveWindow struct{ hub.Window }

func (w liveWindow) Profile(h uint32) subscriptions.Profile {
	return subscriptions.Profile(w.Window.Profile(h))
}

func (w liveWindow) Pending() []subscriptions.Change {
	hp := w.Window.Pending()
	out := make([]subscriptions.Change, len(hp))
	for i, c := range hp {
		out[i] = subscriptions.Change(c)
	}
	return out
}

// Unwrap lets the WebSocket upgrade reach the connection's http.Hijacker
// through the metrics middleware.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
