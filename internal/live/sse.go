package live

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/connguard"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/internal/wsflow"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// ServeStream answers GET /v1/stream (api mounts it): one live view as a
// stream of Server-Sent Events, for networks and proxies that break
// WebSockets (PROTOCOL.md, "Live views over Server-Sent Events"). The
// query is a subscribe message's fields (streamQuery), the token an
// Authorization: Bearer header or access_token; Last-Event-ID resumes as
// since does. Everything that refuses the stream (origin, token, view,
// board, the tenant's cap) is an HTTP error with api's body, before a byte
// of the stream. Then the connection is hijacked and is an sseConn: the
// same outbox, writer pool and encodings as a WebSocket's, each message one
// event (id: the view's seq, event: its type, data: its JSON), in HTTP/1.1
// chunks, until a close event.
func (p *Plane) ServeStream(w http.ResponseWriter, r *http.Request) {
	origin, ok := p.originAllowed(r)
	if !ok {
		p.refusals.Refused(refusal.Origin, "origin", truncate(origin), "host", truncate(r.Host))
		writeHTTPError(w, forbidden("Origin: %q may not open streams", truncate(origin)))
		return
	}
	if !r.ProtoAtLeast(1, 1) { // the stream is chunked
		writeHTTPError(w, badRequest("HTTP/1.1 required: a stream is sent in chunks"))
		return
	}
	sc, e := p.streamScope(r) // before the query, as api authenticates before a handler reads it
	if e != nil {
		writeHTTPError(w, e)
		return
	}
	m, err := streamQuery(r)
	if err != nil {
		p.release(sc.Tenant)
		writeHTTPError(w, p.errorOf(err))
		return
	}
	c := newSSEConn(p, sc)
	raw, err := p.boardMessage(r.Context(), sc, m) // waits, bounded (catchup.go)
	if raw != nil {
		c.out.Send(raw)
	}
	var v *liveView
	if err == nil {
		v, err = p.join(m, sc, c.out)
	}
	if err == nil {
		if err = p.awaitResume(r.Context(), v, m.Since); err != nil { // bounded (resume.go)
			p.leave(v)
		} else if v.gone() { // its board was deleted before the stream started (gone.go)
			p.leave(v)
			err = deletedError(m.Board)
		}
	}
	if err != nil {
		p.release(sc.Tenant)
		writeHTTPError(w, queryError(p.errorOf(err)))
		return
	}
	c.view, c.board = v, m.Board
	if err := c.open(w, origin); err != nil {
		c.cleanup()
		p.release(sc.Tenant) // never tracked: no untrack gives it back
		return
	}
	if !p.track(c) {
		c.close(newClose(wire.CloseGoingAway, "server shutting down"))
		c.finish()
		p.release(sc.Tenant)
		return
	}
	go func() {
		defer p.untrack(c)
		c.serve()
	}()
}

// queryError names a view's field as the stream's query does: limit, not
// view.limit.
func queryError(e *Error) *Error {
	if m, ok := strings.CutPrefix(e.Message, "view."); ok {
		return &Error{e.Code, m}
	}
	return e
}

// streamScope verifies a stream request's token (Authorization: Bearer,
// or access_token; one of them, once) and counts it against its tenant's
// cap, logging a refusal. The error is what HTTP answers for it.
func (p *Plane) streamScope(r *http.Request) (auth.Scope, *Error) {
	tok, e := streamToken(r)
	if e != nil {
		p.refusals.Refused(refusal.Token, "reason", e.Message)
		return auth.Scope{}, e
	}
	sc, err := p.admitToken(tok)
	if errors.Is(err, errCapped) {
		return sc, &Error{"rate_limited", "tenant at its connection cap"}
	}
	if err != nil {
		return sc, p.tokenError(err)
	}
	return sc, nil
}

// tokenError is the HTTP error of a refused token: Config.ErrorOf's (api
// passes its own, so that a stream is refused as any request), or, where
// that knows no auth errors, the class of auth's sentinel.
func (p *Plane) tokenError(err error) *Error {
	if errors.Is(err, errNoReadRole) {
		return forbidden("token: role not granted")
	}
	if e := p.errorOf(err); e.Code != "internal" {
		return e
	}
	if errors.Is(err, auth.ErrForbidden) {
		return forbidden("token: not allowed")
	}
	return &Error{"unauthorized", "token: refused"}
}

// streamToken returns the request's token: its one Authorization: Bearer
// header or its one access_token, never both.
func streamToken(r *http.Request) (string, *Error) {
	hdr := r.Header.Values("Authorization")
	toks := r.URL.Query()["access_token"]
	switch {
	case len(hdr) > 1:
		return "", badRequest("Authorization: more than one header, want exactly one")
	case len(toks) > 1:
		return "", badRequest("access_token: more than one, want exactly one")
	case len(hdr) == 1 && len(toks) == 1:
		return "", badRequest("access_token: given with an Authorization header, want one of them")
	case len(toks) == 1:
		return toks[0], nil
	case len(hdr) == 1 && len(hdr[0]) > 7 && http.CanonicalHeaderKey(hdr[0][:6]) == "Bearer" && hdr[0][6] == ' ':
		return hdr[0][7:], nil
	}
	return "", &Error{"unauthorized", "Authorization: want \"Bearer <token>\""}
}

// writeHTTPError answers e with api's error body, {"error":{"code","message"}}.
func writeHTTPError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code.Status()) // as api answers it
	// An error means the client hung up: nothing to do.
	_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: wire.ErrorDetail{Code: e.Code, Message: e.Message}})
}

// sseConn is one event stream of one live view: a hijacked HTTP/1.1
// connection whose response body is chunks of events. Its own goroutine
// (serve) reads the connection only to see the client leave; the writer
// pool writes its outbox, as a WebSocket's; timers send heartbeats and end
// it at its token's expiry.
type sseConn struct {
	p      *Plane
	sc     auth.Scope // the stream's token: one per stream, never refreshed
	out    *subscriptions.Outbox
	sched  atomic.Int32  // the writer pool's state
	opened atomic.Bool   // the response's header is out: writers may write
	ended  atomic.Bool   // closing: arm no more pings
	done   chan struct{} // closed when close runs
	flow   *wsflow.Conn  // set by open, before opened
	beat   wheelPos      // its place in the heartbeat wheel (keepalive.go)

	view  *liveView // set before the stream opens, then read-only
	board string

	sendMu sync.Mutex // guards the fields below, and orders every write of the stream
	closed bool       // the close event went out: nothing more may

	final bool // a turn holds the view's end (its board was deleted); the writer's only

	timerMu sync.Mutex     // guards the timers
	expiry  *time.Timer    // the token's expiry
	ping    *time.Timer    // the next heartbeat
	pings   sync.WaitGroup // a heartbeat armed or running
}

func newSSEConn(p *Plane, sc auth.Scope) *sseConn {
	c := &sseConn{p: p, sc: sc, done: make(chan struct{})}
	c.out = subscriptions.NewOutbox(0, func() {
		if c.opened.Load() { // before open, open schedules once itself
			p.pool.schedule(c)
		}
	})
	return c
}

// open hijacks the request's connection and writes the response's header;
// from then on writers may write the stream.
func (c *sseConn) open(w http.ResponseWriter, origin string) error {
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return err
	}
	_ = nc.SetDeadline(time.Time{}) // the server's read and write timeouts are for requests, not streams
	_ = brw                         // what the client sent after its request is never read: it may send nothing more
	c.flow = wsflow.NewConn(nc, c.p.slowTO)
	c.flow.OnResume(func() { c.p.pool.schedule(c) })
	c.flow.OnStall(func() {
		c.p.metrics.slowCloses.Inc()
		c.close(newClose(wire.CloseSlow, "client too slow: bytes waited unsent past the slow timeout"))
	})
	connguard.Busy(nc) // authenticated: never evicted for the connection budget
	hdr := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n" +
		"X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
	if origin != "" {
		hdr += "Access-Control-Allow-Origin: " + origin + "\r\nVary: Origin\r\n"
	}
	if err := c.flow.Send([]byte(hdr + "\r\n")); err != nil {
		c.flow.Close()
		return err
	}
	c.opened.Store(true)
	c.p.pool.schedule(c)
	return nil
}

// serve runs the stream until the client leaves or close ends it.
func (c *sseConn) serve() {
	c.p.metrics.conns.Inc()
	defer c.p.metrics.conns.Dec()
	c.timerMu.Lock()
	c.expiry = time.AfterFunc(time.Until(c.sc.Expiry), func() { c.close(newClose(wire.CloseExpired, "token expired")) })
	c.timerMu.Unlock()
	c.armPing()
	if k := c.p.verifier.Keyring(); !k.Holds(c.sc.Kid, c.sc.Tenant) { // a reload raced the verification
		c.close(keyRemovedClose)
	}
	var buf [64]byte
	for { // the client sends nothing more: a read ends when it leaves or close wakes it
		if _, err := c.flow.Conn.Read(buf[:]); err != nil {
			break
		}
	}
	c.finish()
}

// finish stops the timers, ends the subscription, lets the close event
// drain (bounded by the slow timeout) and closes the connection.
func (c *sseConn) finish() {
	c.ended.Store(true)
	c.stopTimers()
	c.cleanup()
	c.flow.Wait()
	c.flow.Close()
	c.flow.Wait()
	c.pings.Wait()
}

// cleanup ends the subscription; untrack gives back the tenant's slot.
func (c *sseConn) cleanup() {
	c.p.leaveAll([]*liveView{c.view})
	c.out.Close() // untrack gives back the tenant's slot
}

func (c *sseConn) stopTimers() {
	c.timerMu.Lock()
	defer c.timerMu.Unlock()
	if c.expiry != nil {
		c.expiry.Stop()
	}
	if c.ping != nil && c.ping.Stop() {
		c.pings.Done()
	}
}

// armPing schedules the next heartbeat comment in Options.PingInterval.
func (c *sseConn) armPing() {
	c.timerMu.Lock()
	defer c.timerMu.Unlock()
	if c.ended.Load() {
		return // stopTimers ran or is about to: arm nothing it cannot see
	}
	c.pings.Add(1)
	c.ping = time.AfterFunc(c.p.pingTO, func() {
		defer c.pings.Done()
		if !c.flow.Busy() { // bytes wait unsent already: they keep proxies awake
			c.send(appendChunk(nil, []byte(": ping\n\n")))
		}
		c.armPing()
	})
}

// send writes b to the stream unless the close event went out. Never blocks.
func (c *sseConn) send(b []byte) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if !c.closed {
		c.flow.Send(b) // an error means the client left: serve's read ends
	}
}

// close ends the stream with a close event of e's code and reason and the
// response's last chunk, once, and wakes serve's read. The event waits
// behind no message: the outbox is closed first.
func (c *sseConn) close(e closeError) {
	c.shut(func() []byte {
		c.p.metrics.closed(e.code)
		data, _ := json.Marshal(wire.Close{Code: e.code, Reason: e.reason}) // an int and a string: cannot fail
		ev := append(append([]byte("event: close\ndata: "), data...), "\n\n"...)
		return append(appendChunk(nil, ev), "0\r\n\r\n"...)
	})
}

// shut ends the stream once: the outbox closed first (so what last
// returns waits behind no message), last's bytes sent, serve's read woken
// to clean up. last runs only on the first call.
func (c *sseConn) shut(last func() []byte) {
	c.sendMu.Lock()
	if c.closed {
		c.sendMu.Unlock()
		return
	}
	c.closed = true
	c.ended.Store(true)
	close(c.done)
	c.out.Close()
	c.flow.Send(last())
	c.sendMu.Unlock()
	_ = c.flow.Conn.SetReadDeadline(time.Now()) // serve's read returns: it cleans up
}

// abort drops the stream without a close event.
func (c *sseConn) abort() { c.flow.Close() }

func (c *sseConn) current() (auth.Scope, bool) { return c.sc, true }
func (c *sseConn) boards() []string            { return []string{c.board} }
func (c *sseConn) ending() bool                { return c.ended.Load() }

// The sseConn side of poolConn: a turn is one HTTP chunk of events.

func (c *sseConn) state() *atomic.Int32          { return &c.sched }
func (c *sseConn) outbox() *subscriptions.Outbox { return c.out }
func (c *sseConn) socket() *wsflow.Conn          { return c.flow }
func (c *sseConn) wrote()                        {}

// chunkSizeLen is the width of a chunk's size: hexadecimal with leading
// zeros (RFC 9112, 7.1: chunk-size = 1*HEXDIG), so that a turn reserves it
// before it knows its length.
const chunkSizeLen = 8

// openTurn reserves the chunk's size line: sendTurn fills it in.
func (c *sseConn) openTurn(dst []byte) []byte {
	return append(dst, "00000000\r\n"...)
}

// appendMessage appends m as one event: id (a view's seq; none for an
// error or board message, so that the stream's last id stays), event (its
// type) and data (its JSON, which holds no newline).
func (c *sseConn) appendMessage(dst []byte, m subscriptions.Message) []byte {
	typ, seq, ok := m.Event()
	if m.Final() {
		c.final = true // sendTurn ends the stream after this event
	}
	if ok {
		dst = strconv.AppendUint(append(dst, "id: "...), seq, 10)
		dst = append(dst, '\n')
	}
	dst = append(dst, "event: "...)
	start := len(dst)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: "...)
	data := len(dst)
	dst = m.AppendTo(dst)
	if !ok { // a control message: its type is its JSON's first field
		name := controlType(dst[data:])
		dst = append(dst[:start], append([]byte(name+"\ndata: "), dst[data:]...)...)
	}
	return append(dst, "\n\n"...)
}

// controlType returns the type of a control message the plane encoded
// ({"type":"error",…}), or "message".
func controlType(raw []byte) string {
	const prefix = `{"type":"`
	if len(raw) < len(prefix) || string(raw[:len(prefix)]) != prefix {
		return "message"
	}
	for i := len(prefix); i < len(raw) && i < len(prefix)+32; i++ {
		if raw[i] == '"' {
			return string(raw[len(prefix):i])
		}
	}
	return "message"
}

// sendTurn fills in the chunk's size and ends it.
func (c *sseConn) sendTurn(turn []byte) {
	n := len(turn) - chunkSizeLen - 2
	const hex = "0123456789abcdef"
	for i := chunkSizeLen - 1; i >= 0; i-- {
		turn[i] = hex[n&0xf]
		n >>= 4
	}
	c.send(append(turn, "\r\n"...))
	if c.final {
		c.end()
	}
}

// end ends the stream after its view's end (an error event: its board was
// deleted) with the response's last chunk, no close event: the error said
// why, and a client that opened the stream again would be refused 404.
func (c *sseConn) end() { c.shut(func() []byte { return []byte("0\r\n\r\n") }) }

// appendChunk appends b as one HTTP/1.1 chunk.
func appendChunk(dst, b []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(b)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, b...)
	return append(dst, "\r\n"...)
}
