package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/connguard"
	"github.com/rankwire/rankwire/internal/effects"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/internal/wsflow"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// wsConn is one WebSocket of live views. One goroutine of its own serves
// it (serve: it reads and handles client messages, one at a time); the
// writer pool writes its outbox; the plane's ping wheel pings it
// (keepalive.go); a timer ends it at its token's expiry; its wsflow.Conn
// drains a stalled write. All end with the connection (ended) and are
// waited for by serve. The engine only ever puts into the
// outbox, so it never waits on the client.
type wsConn struct {
	p     *Plane
	ws    *websocket.Conn
	flow  *wsflow.Conn
	sched atomic.Int32 // the writer pool's state: schedIdle, …
	// replies waiting for a writer's turn (see reply). Beside sched, which
	// the writer touches anyway: at 10,000 connections a writer's turn
	// that touched written's channel too paid a cache miss per message.
	replyWaits atomic.Int32
	// out is the connection's outbox, in its own memory right after sched
	// for the same reason: a writer's turn reads sched, the outbox's lock
	// and queue, and its first subscription (in the outbox), on adjacent
	// cache lines, with no pointer to load first.
	out subscriptions.Outbox
	// final: a writer's turn holds a subscription's end (its board was
	// deleted): sendTurn forgets the ended ones once it is sent. The
	// writer's only (one writer at a time per connection).
	final bool

	ended     atomic.Bool   // the connection is closing: ping it no more
	done      chan struct{} // closed when the connection starts closing
	written   chan struct{} // a writer's turn took messages (capacity 1): see reply
	closeOnce sync.Once

	ka keepAlive // pings: keepalive.go

	mu     sync.Mutex // guards the fields below
	scope  auth.Scope
	authed bool
	timer  *time.Timer // fires at the token's expiry (or the auth deadline)
	subs   subList
}

// liveSub is one subscription of a connection, with the board it reads:
// a refreshed token is checked against it.
type liveSub struct {
	id    string
	view  *liveView
	board string
}

func newWSConn(p *Plane, ws *websocket.Conn, flow *wsflow.Conn) *wsConn {
	c := &wsConn{p: p, ws: ws, flow: flow,
		done: make(chan struct{}), written: make(chan struct{}, 1)}
	c.out.Init(0, func() { p.pool.schedule(c) })
	flow.OnResume(func() { p.pool.schedule(c) })
	flow.OnStall(func() {
		p.metrics.slowCloses.Inc()
		c.close(newClose(wire.CloseSlow, "client too slow: bytes waited unsent past the slow timeout"))
	})
	ws.SetReadLimit(wire.MaxMessage)
	return c
}

// serve runs the connection until it ends. sc is the access_token's scope,
// its tenant admitted (nil: wait for an auth message); refused, when not
// nil, why the connection may not go on: it is closed with that code
// before a message is read or a byte of data written.
func (c *wsConn) serve(sc *auth.Scope, refused *closeError) {
	defer func() {
		c.ended.Store(true)
		c.p.pings.remove(c)
		c.cleanup()
		// A peer that vanished without a close handshake leaves the
		// hijacked socket open (CLOSE_WAIT) until someone closes it: us.
		// The close also ends a drain.
		c.ws.CloseNow()
		c.flow.Wait()
	}()
	c.p.metrics.conns.Inc()
	defer c.p.metrics.conns.Dec()
	if refused != nil {
		c.close(*refused) // returns once the handshake is over: the read below fails
		return
	}
	c.p.pings.add(c)
	if sc != nil {
		c.setScope(*sc, true)
		if c.closeIfRevoked(*sc) { // a reload raced the verification
			return
		}
	} else {
		c.mu.Lock()
		c.timer = time.AfterFunc(c.p.authTO, func() { c.close(newClose(wire.CloseExpired, "no auth message in time")) })
		c.mu.Unlock()
	}
	c.readLoop()
}

// setScope installs a verified scope and arms the expiry timer.
func (c *wsConn) setScope(sc auth.Scope, admitted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setScopeLocked(sc, admitted)
}

func (c *wsConn) setScopeLocked(sc auth.Scope, admitted bool) {
	c.scope, c.authed = sc, admitted
	connguard.Busy(c.flow.Conn) // authenticated: never evicted for the connection budget
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(time.Until(sc.Expiry), func() { c.close(newClose(wire.CloseExpired, "token expired")) })
}

func (c *wsConn) current() (auth.Scope, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scope, c.authed
}

// abort drops the connection without a close handshake: see liveConn.
func (c *wsConn) abort() { c.ws.CloseNow() }

// ending reports whether the connection is closing: see liveConn.
func (c *wsConn) ending() bool { return c.ended.Load() }

// boards returns the board of each subscription: see liveConn. It takes c.mu.
func (c *wsConn) boards() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.subs))
	for _, s := range c.subs {
		if !s.view.gone() { // ended, its error on the way: the writer forgets it (gone.go)
			out = append(out, s.board)
		}
	}
	return out
}

// cleanup ends every subscription; untrack gives back the tenant's slot
// after it.
func (c *wsConn) cleanup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	views := make([]*liveView, 0, len(c.subs))
	for _, s := range c.subs {
		views = append(views, s.view)
	}
	c.p.leaveAll(views)
	c.subs = nil
	c.out.Close()
}

// close closes the connection with e's code, once, and counts it by code.
// The close handshake is bounded by coder/websocket's own timeouts, and by
// Plane.Close's context.
func (c *wsConn) close(e closeError) {
	c.closeOnce.Do(func() {
		c.ended.Store(true)
		close(c.done)
		c.p.metrics.closed(e.code)
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
// Messages past the connection's rate close it (4029).
func (c *wsConn) readLoop() {
	done := make(chan struct{})
	rate := newMsgBucket(c.p.msgRate, c.p.msgBurst, time.Now())
	for {
		typ, data, err := c.ws.Read(noDeadline)
		if err != nil {
			c.readFailed(err)
			return
		}
		if !rate.take(time.Now()) {
			c.overRate()
			return
		}
		go func() {
			defer func() { done <- struct{}{} }()
			c.frame(typ, data)
		}()
		<-done
	}
}

// readFailed accounts for a read that ended the connection: a message over
// the read limit, which coder/websocket closed with 1009 itself.
func (c *wsConn) readFailed(err error) {
	if errors.Is(err, websocket.ErrMessageTooBig) {
		// The rest of the message waits unread in the socket: without a
		// linger, closing it sends a reset that can cost the client the
		// 1009 close frame (it would see 1006 and reconnect).
		c.flow.LingerOnClose()
		c.p.metrics.closed(wire.CloseTooBig)
		c.p.refusals.Refused(refusal.TooBig, c.tenantAttr()...)
	}
}

// overRate closes a connection that sent messages faster than allowed.
func (c *wsConn) overRate() {
	c.p.refusals.Refused(refusal.Rate, c.tenantAttr()...)
	c.close(newClose(wire.CloseOverLimit, fmt.Sprintf("too many messages: more than %d a second", c.p.msgRate)))
}

// tenantAttr is the slog attribute of the connection's tenant, where known.
func (c *wsConn) tenantAttr() []any {
	if sc, ok := c.current(); ok {
		return []any{"tenant", sc.Tenant}
	}
	return nil
}

// frame handles one client frame: JSON text, valid UTF-8 (RFC 6455 fails
// a text frame that is not with 1007; PROTOCOL.md: never replaced).
func (c *wsConn) frame(typ websocket.MessageType, data []byte) {
	switch {
	case typ != websocket.MessageText:
		c.reply("", badRequest("message: binary frames are not accepted; send JSON text"))
	case !utf8.Valid(data):
		c.p.refusals.Refused(refusal.BadText, c.tenantAttr()...)
		c.close(newClose(wire.CloseInvalidText, "message: not valid UTF-8"))
	default:
		c.handle(data)
	}
}

// reply queues an error message. A reply waits while the outbox holds
// its most control messages already, until a writer's turn takes some:
// a client that reads promptly is never closed for the replies it caused,
// and meanwhile its next message stays unread (back pressure). A client
// that stopped reading is closed by its socket's drain (4008, bytes unsent
// past the slow timeout); the wait is bounded by the same timeout. An id
// longer than wire.MaxSubID is not echoed.
func (c *wsConn) reply(id string, e *Error) {
	if len(id) > wire.MaxSubID {
		id = "" // not an id this connection could hold: not echoed back
	}
	raw := encodeError(id, e)
	if c.out.Send(raw) {
		return
	}
	// Counted before Send is tried again: a writer's turn that frees room
	// after that Send sees the count and leaves a token in written; one
	// that freed it before, Send sees (both are sequentially consistent).
	c.replyWaits.Add(1)
	defer c.replyWaits.Add(-1)
	t := time.NewTimer(c.p.slowTO)
	defer t.Stop()
	for !c.out.Send(raw) {
		select {
		case <-c.written:
		case <-c.done:
			return
		case <-t.C:
			c.close(newClose(wire.CloseSlow, "client too slow: replies waited unsent past the slow timeout"))
			return
		}
	}
}

// wrote tells a waiting reply that a writer's turn took messages. O(1),
// never blocks: called by the writer pool.
func (c *wsConn) wrote() {
	if c.replyWaits.Load() == 0 {
		return
	}
	select {
	case c.written <- struct{}{}:
	default:
	}
}

func (c *wsConn) handle(data []byte) {
	m, err := decodeMsg(data)
	if err != nil {
		c.reply(m.ID, c.p.errorOf(err))
		return
	}
	if _, ok := effects.Messages[m.Type]; !ok || !slices.Contains(messageTypes, m.Type) {
		// A type the plane does not take, or one without a row in the
		// table of effects: refused either way (fail closed).
		c.reply(m.ID, badRequest("type: %q is not %s", truncate(m.Type), typeList))
		return
	}
	_, authed := c.current()
	switch {
	case m.Type == wire.TypeAuth:
		c.auth(m.Token, authed)
	case !authed:
		c.reply(m.ID, &Error{wire.CodeUnauthorized, "type: the first message must be auth"})
	case m.Type == wire.TypeSubscribe:
		c.subscribe(m)
	case m.Type == wire.TypeUnsubscribe:
		c.unsubscribe(m.ID)
	default: // in messageTypes but not dispatched above: a wiring mistake TestMessagesHaveEffects catches
		c.reply(m.ID, &Error{wire.CodeInternal, "type: " + truncate(m.Type) + " has no handler"})
	}
}

// messageTypes are the client messages handle dispatches; each has a row
// in the table of effects (effects.Messages), which decides its role and
// reach (TestMessagesHaveEffects fails on a type without one).
var messageTypes = []string{wire.TypeSubscribe, wire.TypeUnsubscribe, wire.TypeAuth}

// typeList names messageTypes in a refusal: "subscribe, unsubscribe or auth".
var typeList = strings.Join(messageTypes[:len(messageTypes)-1], ", ") + " or " + messageTypes[len(messageTypes)-1]

func (c *wsConn) subscribe(m clientMsg) {
	sc, _ := c.current()
	c.mu.Lock()
	c.pruneLocked() // a deleted board's ended views free their ids and slots
	dup := c.subs.find(m.ID) >= 0
	n := len(c.subs)
	c.mu.Unlock()
	if dup {
		c.reply(m.ID, &Error{wire.CodeConflict, "id: " + truncate(m.ID) + " is already subscribed on this connection"})
		return
	}
	if n >= wire.MaxSubscriptions {
		c.reply(m.ID, badRequest("id: at most %d subscriptions per connection", wire.MaxSubscriptions))
		return
	}
	// The board message goes before the join: the join puts the snapshot in
	// the outbox, and a writer may take it at once. (Where the join then
	// fails, the error follows it; a client drops a board message of an id
	// it does not hold.)
	raw, err := c.p.boardMessage(context.Background(), sc, m) // waits, bounded (catchup.go)
	if raw != nil {
		c.out.Send(raw)
	}
	var v *liveView
	if err == nil {
		v, err = c.join(m, sc)
	}
	if err != nil {
		c.reply(m.ID, c.p.errorOf(err))
		return
	}
	c.mu.Lock()
	c.subs = append(c.subs, liveSub{id: m.ID, view: v, board: m.Board})
	if v.gone() { // ended since join: its error's turn may have passed before it was here
		c.pruneLocked()
	}
	c.mu.Unlock()
	c.armResume(m.ID, v, m.Since) // a resume from the future: bounded (resume.go)
}

// joinError names the field of a hub's refusal of a join by its protocol
// code: m is validated, so what the hub can still refuse is the board (not_found: it
// does not exist) or the window (bad_request: the board keeps no such
// window). Other codes (unavailable, internal) pass as they are.
func joinError(e *Error, m clientMsg) *Error {
	switch e.Code {
	case wire.CodeNotFound:
		return notFound("board: %q does not exist", m.Board)
	case wire.CodeBadRequest:
		w := m.Window
		if w == "" {
			w = "all"
		}
		return badRequest("window: board %q keeps no %s windows", m.Board, w)
	}
	return e
}

// join validates m and subscribes under the tenant's read lock, so that the
// view starts exactly where the board and its change feed stand.
func (c *wsConn) join(m clientMsg, sc auth.Scope) (*liveView, error) {
	return c.p.join(m, sc, &c.out)
}

// join is a connection's join, into out: a WebSocket's or an event stream's.
// A following subscription (follow.go) ignores since: a seq of one window
// means nothing in the next, and the client cannot know which window is
// current when it resumes.
func (p *Plane) join(m clientMsg, sc auth.Scope, out *subscriptions.Outbox) (*liveView, error) {
	l, spec, err := subscription(m, sc)
	if err != nil {
		return nil, err
	}
	v := &liveView{}
	if m.Follow {
		v.f = &followSpec{key: followKey{sc.Tenant, l.Board, l.Window}, id: m.ID, spec: spec, out: out}
		m.Since = nil
	}
	err = p.hub.ReadWindow(l, func(w hub.Window) (err error) {
		key := subscriptions.Key{Tenant: sc.Tenant, Board: l.Board, Window: w.Key()}
		v.sub, err = p.eng.Subscribe(key, window{w}, out, m.ID, spec, m.Since)
		v.window = w.Key()
		return err
	})
	if err != nil {
		return nil, joinError(p.errorOf(err), m)
	}
	if v.f != nil {
		p.follow(v)
	}
	return v, nil
}

func (c *wsConn) unsubscribe(id string) {
	c.mu.Lock()
	c.pruneLocked() // an id whose board was deleted is no longer held: its error said so
	s, ok := c.subs.remove(id)
	c.mu.Unlock()
	if !ok {
		c.reply(id, notFound("id: no subscription %q on this connection", truncate(id)))
		return
	}
	c.p.leave(s.view)
}
