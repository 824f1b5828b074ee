package live

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/internal/wsflow"
	"github.com/rankwire/rankwire/subscriptions"
)

// A connection's place in the writer pool (wsConn.sched).
const (
	schedIdle    int32 = iota // nothing to write, or waiting for its drain
	schedQueued               // in the pool's queue, once
	schedRunning              // a writer is at it
	schedAgain                // a writer is at it, and must look again
)

// Bounds on one writer's turn at one connection, so that a connection
// with many busy subscriptions does not hold a writer: the rest waits for
// its next turn, at the back of the queue.
const (
	maxTurnMessages = 100
	maxTurnBytes    = 64 << 10
)

// poolConn is a connection the writer pool writes: a WebSocket (wsConn)
// or an event stream (sseConn). Both put views in an Outbox and write a
// wsflow.Conn; they differ in how a turn's messages are framed.
type poolConn interface {
	state() *atomic.Int32 // the pool's state of the connection: schedIdle, …
	outbox() *subscriptions.Outbox
	socket() *wsflow.Conn
	// openTurn appends what precedes a turn's messages to dst.
	openTurn(dst []byte) []byte
	// appendMessage appends m, framed, to dst.
	appendMessage(dst []byte, m subscriptions.Message) []byte
	// sendTurn sends a turn's bytes, built from openTurn on; it never blocks.
	sendTurn(turn []byte)
	// wrote tells the connection that a turn took messages; O(1), never blocks.
	wrote()
}

// writerPool writes every connection's outbox with a few goroutines
// (GOMAXPROCS) instead of one per connection: a tick that offers ten
// thousand messages wakes no goroutine per connection, and an idle
// connection costs no writer stack. Writers never wait for a client: the
// connection's wsflow.Conn takes every write, and one that stalls is left
// out until its drain finishes.
//
// Invariant: a connection is in the queue at most once and served by at
// most one writer at a time (wsConn.sched), so its messages leave in the
// outbox's order.
type writerPool struct {
	m *metrics

	// inflight counts the connections queued or at a writer; idle gets a
	// token (capacity 1, never a blocking send) each time it falls to
	// zero: settle waits on it.
	inflight atomic.Int64
	idle     chan struct{}

	mu      sync.Mutex // guards the fields below
	cond    sync.Cond  // signalled when queue grows or closed is set
	queue   []poolConn // queue[head:] waits, oldest first
	head    int
	closed  bool
	started bool
	wg      sync.WaitGroup // one per writer
}

func newWriterPool(m *metrics) *writerPool {
	p := &writerPool{m: m, idle: make(chan struct{}, 1)}
	p.cond.L = &p.mu
	return p
}

// start starts the writers, once.
func (p *writerPool) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return
	}
	p.started = true
	n := max(2, runtime.GOMAXPROCS(0))
	p.wg.Add(n)
	for range n {
		go p.work()
	}
}

// close stops the writers once the queue is empty and waits for them.
func (p *writerPool) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// schedule makes sure a writer will look at c's outbox. Called after
// every put that queues (the outbox's notify) and when c's drain ends;
// O(1), never blocks on a client.
func (p *writerPool) schedule(c poolConn) {
	sched := c.state()
	for {
		switch sched.Load() {
		case schedIdle:
			if sched.CompareAndSwap(schedIdle, schedQueued) {
				p.push(c)
				return
			}
		case schedRunning:
			if sched.CompareAndSwap(schedRunning, schedAgain) {
				return
			}
		default: // queued, or a look again is owed already
			return
		}
	}
}

func (p *writerPool) push(c poolConn) {
	p.inflight.Add(1)
	p.mu.Lock()
	p.queue = append(p.queue, c)
	p.mu.Unlock()
	p.cond.Signal()
}

// take moves up to cap(batch) queued connections into batch, waiting for
// one; nil once the pool is closed and empty.
func (p *writerPool) take(batch []poolConn) []poolConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.head == len(p.queue) {
		if p.closed {
			return nil
		}
		p.cond.Wait()
	}
	n := copy(batch[:cap(batch)], p.queue[p.head:])
	clear(p.queue[p.head : p.head+n])
	p.head += n
	switch {
	case p.head == len(p.queue): // empty: start over at the front
		p.queue, p.head = p.queue[:0], 0
	case p.head > len(p.queue)/2: // mostly taken: move the rest down, once per half
		rest := copy(p.queue, p.queue[p.head:])
		p.queue, p.head = p.queue[:rest], 0
	}
	return batch[:n]
}

// work is one writer: it takes connections from the queue and writes
// what their outboxes hold.
func (p *writerPool) work() {
	defer p.wg.Done()
	w := &poolWriter{}
	batch := make([]poolConn, 0, 16)
	for {
		batch = p.take(batch)
		if batch == nil {
			return
		}
		w.warm(batch)
		for i, c := range batch {
			batch[i] = nil
			sched := c.state()
			sched.Store(schedRunning)
			more := w.turn(c)
			if more || !sched.CompareAndSwap(schedRunning, schedIdle) {
				sched.Store(schedQueued)
				p.push(c)
			}
			p.served()
		}
		p.m.writes.Add(float64(w.writes)) // before messages: a reader that sees the messages sees their writes
		p.m.messages.Add(float64(w.messages))
		p.m.bytes.Add(float64(w.bytes))
		w.messages, w.writes, w.bytes = 0, 0, 0
	}
}

// served counts one connection's turn done (after any push of it again,
// so that inflight falls to zero only when nothing is queued or written).
func (p *writerPool) served() {
	if p.inflight.Add(-1) == 0 {
		select {
		case p.idle <- struct{}{}:
		default:
		}
	}
}

// settle returns once no connection is queued or at a writer (what the
// last Flush offered is written, or waits for a stalled client's drain,
// which the pool does not wait for), or at deadline, or when ctx ends. A
// token left in idle by an earlier fall to zero costs one look more.
func (p *writerPool) settle(ctx context.Context, deadline time.Time) {
	if p.inflight.Load() == 0 {
		return
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for p.inflight.Load() > 0 {
		select {
		case <-p.idle:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// poolWriter is one writer's reusable buffer and counts.
type poolWriter struct {
	out      []byte // a connection's turn: its frames, sent as one write
	messages int
	writes   int
	bytes    int
	warmed   int32 // what warm read, kept so that its loads stay
}

// warm reads, for every connection of a batch, the first words its turn
// reads (the writer state, then the socket's stall flag) before the first
// turn: the loads of one pass do not depend on each other, so the
// processor has them in flight together, where the turns would pay each
// cache miss alone, one after another. At ten thousand connections every
// connection's memory is cold at its turn, and these misses were 3–5 % of
// the gateway's CPU (docs/BENCHMARKS.md, "Shape 2: cost per message,
// fifth sitting"). Atomic loads only: the words are the writers' and the
// drains' to change meanwhile, and a turn reads them again.
func (w *poolWriter) warm(batch []poolConn) {
	var n int32
	for _, c := range batch {
		n += c.state().Load()
	}
	for _, c := range batch {
		if c.socket().Busy() {
			n++
		}
	}
	w.warmed += n
}

// turn frames up to a turn's worth of c's outbox and sends it as one
// write; it reports whether more waits. A connection whose drain is under
// way gets nothing: its drain schedules it when done.
func (w *poolWriter) turn(c poolConn) (more bool) {
	if c.socket().Busy() {
		return false
	}
	w.out = c.openTurn(w.out[:0])
	out, n := c.outbox(), 0
	for {
		if n == maxTurnMessages || len(w.out) >= maxTurnBytes {
			more = true
			break
		}
		m, ok := out.Next()
		if !ok {
			break
		}
		w.out = c.appendMessage(w.out, m)
		n++
		w.bytes += m.Size()
	}
	w.messages += n
	if n > 0 {
		c.sendTurn(w.out)
		w.writes++
		c.wrote()
	}
	if cap(w.out) > 4*maxTurnBytes {
		w.out = nil // one huge turn does not pin its buffer
	}
	return more
}

// The wsConn side of poolConn: each message one WebSocket text frame.

func (c *wsConn) state() *atomic.Int32          { return &c.sched }
func (c *wsConn) outbox() *subscriptions.Outbox { return &c.out }
func (c *wsConn) socket() *wsflow.Conn          { return c.flow }
func (c *wsConn) openTurn(dst []byte) []byte    { return dst }

func (c *wsConn) appendMessage(dst []byte, m subscriptions.Message) []byte {
	if m.Final() {
		c.final = true // sendTurn forgets the ended subscriptions after this turn
	}
	return appendTextFrame(dst, m)
}

// sendTurn sends the turn's frames as one write. An error means the
// connection is closing: its reader cleans up. A turn that held a
// subscription's end then forgets the ended ones (forgetEnded).
func (c *wsConn) sendTurn(turn []byte) {
	c.flow.Send(turn)
	if c.final {
		c.final = false
		c.forgetEnded()
	}
}

// appendTextFrame appends m as one unfragmented, unmasked WebSocket text
// frame (see wsflow.AppendTextHeader).
func appendTextFrame(dst []byte, m subscriptions.Message) []byte {
	return m.AppendTo(wsflow.AppendTextHeader(dst, m.Size()))
}
