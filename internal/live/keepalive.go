package live

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/wire"
)

// Keep-alive rounds (issue 24). Every WebSocket is pinged once per
// Options.PingInterval, and every authenticated connection gets a heartbeat
// once per Options.HeartbeatInterval. Both are wheels: a goroutine of the
// Plane's own (started with the first connection, stopped by Close) visits
// one slot of its connections every tick of about wheelTick, so that each
// connection is visited once per interval at its own offset, and the
// interval's work is spread over it instead of landing at one moment on
// top of real pushes. A visit writes through the plane's non-blocking
// path (wsflow.Conn.Send): no goroutine, timer or context per ping, and
// no wait for the pong.
//
// A ping is a control frame written whole in one Send, so it never
// interleaves with a data frame (wsflow: every data frame and every
// coder/websocket control frame is one write under the socket's lock).
// Pongs are recorded by coder/websocket's OnPongReceived, called by the
// connection's own read loop: a connection whose last ping had no pong by
// its next visit, a whole interval later, is closed 4008 "no pong"
// (PROTOCOL.md), as the per-connection ping did.

// wheelTick is the target spacing of a wheel's visits: an interval is cut
// into interval/wheelTick slots (at least one, at most maxWheelSlots).
const (
	wheelTick     = 200 * time.Millisecond
	maxWheelSlots = 3000
)

// pingFrame is a server's ping control frame: FIN, opcode 9, unmasked,
// no payload (RFC 6455, section 5.5.2). A client's pong echoes the empty
// payload; coder/websocket's own pings, which carry a random payload, are
// no longer sent.
var pingFrame = []byte{0x89, 0x00}

// wheelPos is a connection's place in a wheel: slot+1 (0: not in it) and
// its index in that slot. Guarded by the wheel's mu.
type wheelPos struct{ slot, idx int32 }

// keepAlive is a WebSocket's keep-alive state.
type keepAlive struct {
	ping, beat wheelPos
	// pinged and heard are plane clock readings (Plane.clock): when the
	// last ping was written (0: none yet) and when the last pong was read.
	pinged, heard atomic.Int64
}

// wheel visits its members spread over every: one slot per tick, each
// member in one slot (round-robin as they join, so slots stay even), so
// each member is visited once per every at its own offset.
type wheel struct {
	every time.Duration
	tick  time.Duration
	posOf func(liveConn) *wheelPos // the member's place in this wheel
	// visit handles slot's members at now; called by the wheel's goroutine
	// only, without mu held.
	visit func(now time.Time, slot int, members []liveConn)

	mu         sync.Mutex // guards the fields below and every member's wheelPos
	slots      [][]liveConn
	next       int           // the slot the next member joins
	stop, done chan struct{} // the running goroutine's; nil: none
}

func newWheel(every time.Duration, posOf func(liveConn) *wheelPos, visit func(time.Time, int, []liveConn)) *wheel {
	n := min(max(int(every/wheelTick), 1), maxWheelSlots)
	return &wheel{every: every, tick: every / time.Duration(n), posOf: posOf, visit: visit, slots: make([][]liveConn, n)}
}

// add puts c in the next slot. O(1).
func (w *wheel) add(c liveConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pos := w.posOf(c)
	if pos == nil || pos.slot != 0 {
		return
	}
	s := w.next
	w.next = (w.next + 1) % len(w.slots)
	pos.slot, pos.idx = int32(s+1), int32(len(w.slots[s]))
	w.slots[s] = append(w.slots[s], c)
}

// remove takes c out of its slot, if in one. O(1): the slot's last member
// takes c's place.
func (w *wheel) remove(c liveConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pos := w.posOf(c)
	if pos == nil || pos.slot == 0 {
		return
	}
	s := int(pos.slot - 1)
	slot := w.slots[s]
	last := len(slot) - 1
	if moved := slot[last]; int(pos.idx) != last {
		slot[pos.idx] = moved
		w.posOf(moved).idx = pos.idx
	}
	slot[last] = nil
	w.slots[s] = slot[:last]
	if cap(slot) > 64 && last < cap(slot)/4 { // a crowd left: give back its room
		w.slots[s] = append([]liveConn(nil), w.slots[s]...)
	}
	*pos = wheelPos{}
}

// members appends slot's members to dst, copied under mu.
func (w *wheel) members(slot int, dst []liveConn) []liveConn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append(dst, w.slots[slot]...)
}

// start starts the wheel's goroutine unless it runs.
func (w *wheel) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		return
	}
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go w.run(w.stop, w.done)
}

// stopWait stops the wheel's goroutine, if it runs, and waits for it.
// The owner must not start it again (Plane.Close sets closing first).
func (w *wheel) stopWait() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// run visits one slot per tick until stop is closed.
func (w *wheel) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(w.tick)
	defer t.Stop()
	var buf []liveConn
	for slot := 0; ; slot = (slot + 1) % len(w.slots) {
		select {
		case <-stop:
			return
		case now := <-t.C:
			buf = w.members(slot, buf[:0])
			w.visit(now, slot, buf)
			clear(buf) // hold no ended connection until the next visit
		}
	}
}

// newPingWheel returns the plane's ping wheel: WebSockets, once per
// ping interval.
func (p *Plane) newPingWheel() *wheel {
	return newWheel(p.pingTO, func(lc liveConn) *wheelPos { return &lc.(*wsConn).ka.ping }, p.pingSlot)
}

// pingSlot pings each of members, or closes it where its last ping went
// unanswered. Each costs two atomic loads, a store and a non-blocking
// write of two bytes.
func (p *Plane) pingSlot(_ time.Time, _ int, members []liveConn) {
	now := p.clock()
	for _, lc := range members {
		c := lc.(*wsConn)
		if c.ended.Load() {
			continue
		}
		if sent := c.ka.pinged.Load(); sent != 0 && c.ka.heard.Load() < sent {
			p.closeUnanswered(c)
			continue
		}
		// Stored before the write, so that a pong read at once is heard
		// after it.
		c.ka.pinged.Store(now)
		c.flow.Send(pingFrame) // an error is sticky: the read loop ends the connection
	}
}

// closeUnanswered closes c, whose ping went unanswered for an interval,
// on a goroutine of its own: the close handshake waits for the client.
// Plane.Close waits for it (p.closers).
func (p *Plane) closeUnanswered(c *wsConn) {
	p.closers.Add(1)
	go func() {
		defer p.closers.Done()
		c.close(newClose(wire.CloseSlow, "no pong"))
	}()
}

// heardPong records a pong: coder/websocket's OnPongReceived, called by
// the connection's read loop.
func (c *wsConn) heardPong(context.Context, []byte) { c.ka.heard.Store(c.p.clock()) }

// clock is the plane's monotonic clock: nanoseconds since New, never 0.
func (p *Plane) clock() int64 { return int64(time.Since(p.epoch)) + 1 }
