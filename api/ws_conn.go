package api

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
)

// wsConn is one WebSocket of live views. One goroutine of its own serves
// it (serve: it reads and handles client messages); the writer pool writes
// its outbox; timers ping it and end it at its token's expiry; its
// flowConn drains a stalled write. All end with the connection (ended)
// and are waited for by serve. The engine only ever puts into the outbox,
// so it never waits on the client.
type wsConn struct {
	l     *live
	ws    *websocket.Conn
	flow  *flowConn
	out   *subscriptions.Outbox
	sched atomic.Int32 // the writer pool's state: schedIdle, …

	ended     atomic.Bool // the connection is closing: arm no more pings
	closeOnce sync.Once

	pingMu    sync.Mutex     // guards pingTimer
	pingTimer *time.Timer    // the next ping; nil before the first
	pings     sync.WaitGroup // a ping armed or running

	mu     sync.Mutex // guards the fields below
	scope  auth.Scope
	authed bool
	timer  *time.Timer // fires at the token's expiry (or the auth deadline)
	subs   map[string]*subscriptions.Sub
}

func newWSConn(l *live, ws *websocket.Conn, flow *flowConn) *wsConn {
	c := &wsConn{l: l, ws: ws, flow: flow, subs: map[string]*subscriptions.Sub{}}
	c.out = subscriptions.NewOutbox(0, func() { l.pool.schedule(c) })
	flow.resumed = func() { l.pool.schedule(c) }
	flow.stalled = func() {
		l.metrics.slowCloses.Inc()
		c.close(closeError{closeSlow, "client too slow: bytes waited unsent past the slow timeout"})
	}
	ws.SetReadLimit(maxWSMessage)
	return c
}

// serve runs the connection until it ends. sc is the access_token's scope
// (nil: wait for an auth message); refused, why that token may not connect.
func (c *wsConn) serve(sc *auth.Scope, refused error) {
	c.armPing()
	defer func() {
		c.ended.Store(true)
		c.stopPing()
		c.cleanup()
		// A peer that vanished without a close handshake leaves the
		// hijacked socket open (CLOSE_WAIT) until someone closes it: us.
		// The close also ends a running ping and a drain.
		c.ws.CloseNow()
		c.pings.Wait()
		c.flow.drains.Wait()
	}()
	switch {
	case refused != nil:
		c.close(tokenClose(refused))
	case sc != nil:
		c.setScope(*sc, true)
	default:
		c.mu.Lock()
		c.timer = time.AfterFunc(c.l.authTO, func() { c.close(closeError{closeExpired, "no auth message in time"}) })
		c.mu.Unlock()
	}
	c.l.metrics.conns.Inc()
	defer c.l.metrics.conns.Dec()
	c.readLoop()
}

// setScope installs a verified scope and arms the expiry timer.
func (c *wsConn) setScope(sc auth.Scope, admitted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scope, c.authed = sc, admitted
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(time.Until(sc.Expiry), func() { c.close(closeError{closeExpired, "token expired"}) })
}

func (c *wsConn) current() (auth.Scope, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scope, c.authed
}

// cleanup ends every subscription and gives back the tenant's slot.
func (c *wsConn) cleanup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	for _, s := range c.subs {
		c.l.eng.Unsubscribe(s)
	}
	c.subs = nil
	c.out.Close()
	if c.authed {
		c.l.release(c.scope.Tenant)
	}
}

// close closes the connection with e's code, once. The close handshake is
// bounded by coder/websocket's own timeouts, and by CloseWebSockets' context.
func (c *wsConn) close(e closeError) {
	c.closeOnce.Do(func() {
		c.ended.Store(true)
		c.ws.Close(websocket.StatusCode(e.code), e.reason)
	})
}

// noDeadline is the context of reads: its Done is nil, so that
// coder/websocket arms no timer per read.
var noDeadline = context.Background()

// readLoop reads client messages until the connection closes. Each is
// handled on a goroutine of its own, waited for: handling (a token check,
// a subscription's first view) takes far more stack than waiting for the
// next message, and an idle connection's memory is mostly this goroutine's
// stack, which never shrinks below the deepest it once went. The read's
// context never ends (no timer per read): closing the connection ends it.
func (c *wsConn) readLoop() {
	done := make(chan struct{})
	for {
		typ, data, err := c.ws.Read(noDeadline)
		if err != nil {
			return
		}
		go func() {
			defer func() { done <- struct{}{} }()
			if typ != websocket.MessageText {
				c.reply("", badRequest("message: binary frames are not accepted; send JSON text"))
				return
			}
			c.handle(data)
		}()
		<-done
	}
}

// reply queues an error message; a client whose control queue is full has
// stopped reading and is closed (4008).
func (c *wsConn) reply(id string, e *Error) {
	if !c.out.Send(encodeError(id, e)) {
		go c.close(closeError{closeSlow, "too many unread messages"})
	}
}

func (c *wsConn) handle(data []byte) {
	m, err := decodeMsg(data)
	if err != nil {
		c.reply(m.ID, toError(err, c.l.s.log))
		return
	}
	_, authed := c.current()
	switch {
	case m.Type == "auth":
		c.auth(m.Token, authed)
	case !authed:
		c.reply(m.ID, &Error{http.StatusUnauthorized, "unauthorized", "type: the first message must be auth"})
	case m.Type == "subscribe":
		c.subscribe(m)
	case m.Type == "unsubscribe":
		c.unsubscribe(m.ID)
	default:
		c.reply(m.ID, badRequest("type: %q is not subscribe, unsubscribe or auth", truncate(m.Type)))
	}
}

// auth handles an auth message: the first one authenticates (a refusal
// closes), a later one refreshes the token (a refusal is an error message
// and the old token stays, until it expires).
func (c *wsConn) auth(token string, authed bool) {
	sc, err := c.l.s.cfg.Verifier.Verify(token)
	if err == nil {
		err = mayConnect(sc)
	}
	old, _ := c.current()
	switch {
	case !authed && err != nil:
		c.close(tokenClose(err))
	case !authed && !c.l.admit(sc.Tenant):
		c.close(closeError{closeSlow, "tenant at its WebSocket connection cap"})
	case !authed:
		c.setScope(sc, true)
	case err != nil:
		c.reply("", toError(err, c.l.s.log))
	case sc.Tenant != old.Tenant:
		c.reply("", forbidden("token: tenant %q, the connection's is %q", sc.Tenant, old.Tenant))
	default:
		c.setScope(sc, true)
	}
}

func (c *wsConn) subscribe(m clientMsg) {
	sc, _ := c.current()
	c.mu.Lock()
	n, dup := len(c.subs), c.subs[m.ID] != nil
	c.mu.Unlock()
	if dup {
		c.reply(m.ID, &Error{http.StatusConflict, "conflict", "id: " + truncate(m.ID) + " is already subscribed on this connection"})
		return
	}
	if n >= MaxSubscriptions {
		c.reply(m.ID, badRequest("subscribe: at most %d subscriptions per connection", MaxSubscriptions))
		return
	}
	sub, err := c.join(m, sc)
	if err != nil {
		c.reply(m.ID, toError(err, c.l.s.log))
		return
	}
	c.mu.Lock()
	c.subs[m.ID] = sub
	c.mu.Unlock()
}

// join validates m and subscribes under the tenant's read lock, so that the
// view starts exactly where the board and its change feed stand.
func (c *wsConn) join(m clientMsg, sc auth.Scope) (*subscriptions.Sub, error) {
	l, spec, err := subscription(m, sc)
	if err != nil {
		return nil, err
	}
	var sub *subscriptions.Sub
	err = c.l.s.hub.ReadWindow(l, func(w hub.Window) (err error) {
		key := subscriptions.Key{Tenant: sc.Tenant, Board: l.Board, Window: w.Key()}
		sub, err = c.l.eng.Subscribe(key, liveWindow{w}, c.out, m.ID, spec, m.Since)
		return err
	})
	return sub, err
}

func (c *wsConn) unsubscribe(id string) {
	c.mu.Lock()
	s := c.subs[id]
	delete(c.subs, id)
	c.mu.Unlock()
	if s == nil {
		c.reply(id, notFound("id: no subscription %q on this connection", truncate(id)))
		return
	}
	c.l.eng.Unsubscribe(s)
}

// armPing schedules the next ping in Config.PingInterval. A timer, not a
// goroutine: an idle connection costs its read goroutine only (a
// goroutine's stack is most of an idle connection's memory).
func (c *wsConn) armPing() {
	c.pingMu.Lock()
	defer c.pingMu.Unlock()
	if c.ended.Load() {
		return // stopPing ran or is about to: arm nothing it cannot see
	}
	c.pings.Add(1)
	c.pingTimer = time.AfterFunc(c.l.pingTO, func() {
		defer c.pings.Done()
		c.ping()
	})
}

// stopPing cancels an armed ping; a running one ends with the connection.
func (c *wsConn) stopPing() {
	c.pingMu.Lock()
	defer c.pingMu.Unlock()
	if c.pingTimer != nil && c.pingTimer.Stop() {
		c.pings.Done()
	}
}

// ping pings once and arms the next; a peer that does not answer within
// the interval is closed.
func (c *wsConn) ping() {
	ctx, cancel := context.WithTimeout(context.Background(), c.l.pingTO)
	err := c.ws.Ping(ctx)
	cancel()
	if err != nil {
		if !c.ended.Load() {
			c.close(closeError{closeSlow, "no pong"})
		}
		return
	}
	c.armPing()
}
