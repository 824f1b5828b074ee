package subscriptions

import (
	"sync"
	"sync/atomic"
)

// DefaultMaxControl is how many control messages (errors, acknowledgements)
// an Outbox holds when NewOutbox is given zero.
const DefaultMaxControl = 64

// shared is a snapshot or diff of one view at one seq, encoded once and
// offered to every watcher. Immutable once built.
type shared struct {
	typ  string // "snapshot" or "diff"
	body []byte // everything after the id: see appendBody
	seq  uint64
	prev uint64 // diffs only
	// final: typ "error", the subscription's end (EndBoard); seq zero.
	final bool
}

// Message is one message on its way to a connection: a subscription's
// snapshot or diff, whose body is shared by every watcher of the view, or a
// control message (raw JSON).
type Message struct {
	sub *Sub
	sh  *shared
	raw []byte
}

// AppendTo appends the message's JSON text to dst: the subscription's type
// and id, then the shared body. O(len(message)), no other allocation.
func (m Message) AppendTo(dst []byte) []byte {
	if m.sh == nil {
		return append(dst, m.raw...)
	}
	dst = append(dst, `{"type":"`...)
	dst = append(dst, m.sh.typ...)
	dst = append(dst, `","id":`...)
	dst = append(dst, m.sub.idJSON...)
	dst = append(dst, ',')
	return append(dst, m.sh.body...)
}

// Event returns the type ("snapshot" or "diff") and the view's seq of a
// subscription's message; ok is false for a control message, whose type
// is in its JSON, and for a subscription's end (Final), an error. O(1): an event stream's id and event lines.
func (m Message) Event() (typ string, seq uint64, ok bool) {
	if m.sh == nil || m.sh.final {
		return "", 0, false
	}
	return m.sh.typ, m.sh.seq, true
}

// Final reports whether m ends its subscription: the error EndBoard
// gave it, after which nothing more of it comes. O(1).
func (m Message) Final() bool { return m.sh != nil && m.sh.final }

// Size returns the length of the message's JSON text. O(1).
func (m Message) Size() int {
	if m.sh == nil {
		return len(m.raw)
	}
	return len(`{"type":"","id":,`) + len(m.sh.typ) + len(m.sub.idJSON) + len(m.sh.body)
}

// Sub is one subscription of a connection to a view. Engine.Subscribe
// creates it, Engine.Unsubscribe ends it.
//
// The fields a writer reads for every message (pending, sent, idJSON) sit
// together, and a short id's JSON lives inside the Sub (idInline): at ten
// thousand connections each of them is a cache miss per message, so a
// message touches as few lines as it can.
type Sub struct {
	// pending[:npend] wait for the writer, oldest first: a chain of diffs,
	// each one's prev the seq of the one before it (the first's prev the
	// seq the writer took last, or a snapshot). Guarded by out.mu.
	pending [MaxChain]*shared
	sent    uint64 // guarded by out.mu: the seq of the last message the writer took
	npend   uint8  // guarded by out.mu: how many of pending wait
	hasSent bool   // guarded by out.mu: the writer took one
	queued  bool   // guarded by out.mu: s is in out.ready
	dropped bool   // guarded by out.mu: unsubscribed
	idJSON  []byte // the id as a JSON string: idInline's bytes where it fits

	seq  uint64 // seq of the last message given to out; guarded by its board-window's lock
	widx int    // s's index in v.watchers, -1 once unsubscribed; guarded by the board-window's lock
	hidx int    // s's index in its board-window's held list while held (seq heldSeq): hold.go; same lock
	// ready: a held resume's (hold.go), closed once it is released or s
	// ends; nil where Subscribe did not hold s. Set before Subscribe
	// returns s and never reassigned, so Ready reads it without a lock.
	ready chan struct{}
	// ended: the engine ended s (EndBoard), not its owner; the owner reads
	// it without a lock (Ended) to forget s.
	ended atomic.Bool

	id   string
	kind Kind
	v    *view
	out  *Outbox

	idInline [idInlineSize]byte
}

// idInlineSize is the longest id JSON kept inside its Sub. Clients name
// subscriptions with short ids ("s", "top", "t1"): 22 bytes of JSON hold
// any id of up to 20 plain characters.
const idInlineSize = 22

// newSub returns a subscription named id, its JSON in the Sub where short.
// Out's first subscription lives in out's own memory (see Outbox.first).
func newSub(id string, kind Kind, v *view, out *Outbox) *Sub {
	var s *Sub
	if out != nil {
		s = out.claim()
	}
	if s == nil {
		s = new(Sub)
	}
	s.id, s.kind, s.v, s.out = id, kind, v, out
	s.idJSON = appendString(s.idInline[:0], id) // grows out of idInline where longer
	return s
}

// ID returns the client's name of the subscription.
func (s *Sub) ID() string { return s.id }

// Kind returns the kind of the subscription's view.
func (s *Sub) Kind() Kind { return s.kind }

// MaxChain bounds the messages one subscription holds in its outbox: a
// view's diffs that reach a connection whose writer has not yet taken the
// one before them wait behind it, up to MaxChain, so that the writer sends
// them together in one write (one syscall for several messages: what a
// write per message costs is most of a delivered message's CPU). Past
// MaxChain, or where a diff does not chain on to the last one given, the
// waiting messages are replaced by one of the newest state (the latest
// state wins). Four pointers per subscription; the messages themselves are
// shared by every watcher of the view.
const MaxChain = 4

// Outbox is one connection's queue of outgoing messages, bounded whatever
// the client does: at most MaxChain pending messages per subscription (a
// chain of diffs; past it one message of the newest state replaces them)
// and at most maxControl control messages. The engine puts
// without ever blocking; after every put that queues something (a
// control message, or a subscription that had nothing waiting) the outbox
// calls its notify function, and the connection's writer takes with Next
// until it reports false. Safe for concurrent use.
type Outbox struct {
	mu      sync.Mutex // guards the fields below
	head    int        // ready[:head] are taken; both go back to 0 when it empties
	ready   []*Sub     // ready[head:]: subscriptions with a pending message, oldest first
	closed  bool
	claimed bool // first holds a subscription (once: never reused)
	control [][]byte
	// readyInline is ready's first backing array: a connection with a view
	// or two never allocates for its queue, however many messages pass.
	readyInline [2]*Sub

	notify     func() // called after each put that queues, with no lock held; never nil
	maxControl int

	// first is the connection's first subscription, in the outbox's own
	// memory: the lock, the queue and the subscription a message of a
	// one-view connection reads sit on adjacent cache lines (see Sub).
	first Sub
}

// NewOutbox returns an empty outbox holding at most maxControl control
// messages (zero means DefaultMaxControl). notify (nil: none) is called
// after every put that queues a subscription or a control message,
// outside the outbox's lock, so that the writer can be scheduled; it must
// not block, and it is called from the engine's tick.
func NewOutbox(maxControl int, notify func()) *Outbox {
	o := new(Outbox)
	o.Init(maxControl, notify)
	return o
}

// Init readies a zero Outbox embedded in a connection's own struct, as
// NewOutbox does (so that the connection's writer state and its outbox
// share cache lines). Call it once, before any use; never copy an Outbox.
func (o *Outbox) Init(maxControl int, notify func()) {
	if maxControl <= 0 {
		maxControl = DefaultMaxControl
	}
	if notify == nil {
		notify = func() {}
	}
	o.notify, o.maxControl = notify, maxControl
	o.ready = o.readyInline[:0]
}

// claim returns the outbox's own Sub for its first subscription, or nil
// once taken: a dropped subscription may still sit in the queue, so the
// slot is never reused.
func (o *Outbox) claim() *Sub {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.claimed {
		return nil
	}
	o.claimed = true
	return &o.first
}

// Send queues a control message (raw JSON). It reports false, and drops the
// message, when the outbox holds maxControl of them already or is closed:
// the client is not reading, and the caller should close it. O(1).
func (o *Outbox) Send(raw []byte) bool {
	o.mu.Lock()
	ok := !o.closed && len(o.control) < o.maxControl
	if ok {
		o.control = append(o.control, raw)
	}
	o.mu.Unlock()
	if ok {
		o.notify()
	}
	return ok
}

// Next takes the next message: control messages first, then each
// subscription's pending messages, its chain in order, the subscriptions
// in the order they became pending. O(1) amortised.
func (o *Outbox) Next() (Message, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.control) > 0 {
		raw := o.control[0]
		o.control[0] = nil
		o.control = o.control[1:]
		return Message{raw: raw}, true
	}
	for o.head < len(o.ready) {
		s := o.ready[o.head]
		if s.npend > 1 { // more of its chain waits: s stays at the head
			sh := s.takeFirst()
			return Message{sub: s, sh: sh}, true
		}
		o.popReady()
		s.queued = false
		if s.npend == 1 {
			sh := s.takeFirst()
			return Message{sub: s, sh: sh}, true
		}
	}
	return Message{}, false
}

// popReady drops the head of the ready queue. o.mu is held.
func (o *Outbox) popReady() {
	o.ready[o.head] = nil
	o.head++
	switch {
	case o.head == len(o.ready): // empty: start over at the front, keeping the array
		o.ready, o.head = o.ready[:0], 0
	case o.head > len(o.ready)/2: // mostly taken: move the rest down, once per half
		rest := copy(o.ready, o.ready[o.head:])
		clear(o.ready[rest:])
		o.ready, o.head = o.ready[:rest], 0
	}
}

// takeFirst takes the oldest of s's pending messages (there is one) for
// the writer. out.mu is held.
func (s *Sub) takeFirst() *shared {
	sh := s.pending[0]
	n := s.npend - 1
	copy(s.pending[:n], s.pending[1:s.npend])
	s.pending[n] = nil
	s.npend = n
	s.sent, s.hasSent = sh.seq, true
	return sh
}

// Len returns how many messages wait: for tests and metrics.
// O(subscriptions waiting).
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.control)
	for _, s := range o.ready[o.head:] {
		n += int(s.npend)
	}
	return n
}

// Close drops every waiting message; later puts are ignored.
func (o *Outbox) Close() {
	o.mu.Lock()
	o.closed, o.control, o.ready, o.head = true, nil, nil, 0
	o.mu.Unlock()
}

// put makes m s's only pending message, replacing any others, and reports
// whether it replaced one (a coalesced state). O(1); never blocks.
func (o *Outbox) put(s *Sub, m *shared) (replaced bool) { return o.offer(s, m, nil) }

// offer gives s, whose view v just changed, its next message in one step
// (one lock per watcher per tick). d, the view's diff, where it chains on
// to what s was given last (s.seq: the last of its pending messages, or
// what the writer took) and fewer than MaxChain wait: appended to the
// chain, so that the writer sends them in one write. Else the pending
// messages are replaced by one: a diff from what the writer took last,
// where the ring reaches it and it is shorter than the snapshot (a slow
// client's catch-up); else v's snapshot. It reports whether pending
// messages were replaced (a coalesced state). A nil v means d
// unconditionally, alone (put). The caller holds the board-window's lock,
// which guards s.seq and v. O(1), never blocks.
//
// It notifies only when s joins the ready queue: while s waits in it, the
// put that queued it has notified already, and a writer's turn that has
// not yet taken s will (the writer takes until Next reports false, or is
// scheduled again at its turn's bound or its drain's end). At ten thousand
// watchers most offers find a message still waiting, and each notify
// reads the connection's writer state, a cache miss.
func (o *Outbox) offer(s *Sub, d *shared, v *view) (replaced bool) {
	o.mu.Lock()
	if o.closed || s.dropped {
		o.mu.Unlock()
		return false
	}
	n := int(s.npend)
	if v != nil && d != nil && n > 0 && n < MaxChain && s.seq == d.prev {
		s.pending[n] = d // s is queued already (npend > 0): nobody to notify
		s.npend++
		o.mu.Unlock()
		return false
	}
	replaced = n > 0
	m := d
	if v != nil && (m == nil || replaced || s.seq != m.prev) {
		// The smaller of the catch-up diff (where the ring reaches) and the
		// snapshot: a diff keyed by rank repeats every row that shifted, so a
		// new leader of a top 10 makes it longer than the snapshot.
		m = v.snapshot()
		if s.hasSent {
			if d, ok := v.catchUp(s.sent); ok && len(d.body) < len(m.body) {
				m = d
			}
		}
	}
	clear(s.pending[:n])
	s.pending[0], s.npend = m, 1
	o.queueUnlock(s)
	return replaced
}

// end makes m s's last message, replacing what waits, and ends s: no
// later offer reaches it (EndBoard). O(1); never blocks.
func (o *Outbox) end(s *Sub, m *shared) {
	o.mu.Lock()
	if o.closed || s.dropped {
		o.mu.Unlock()
		return
	}
	clear(s.pending[:s.npend])
	s.pending[0], s.npend, s.dropped = m, 1, true
	o.queueUnlock(s)
}

// drop forgets s's pending messages: s was unsubscribed.
func (o *Outbox) drop(s *Sub) {
	o.mu.Lock()
	s.dropped = true
	clear(s.pending[:])
	s.npend = 0
	o.mu.Unlock()
}

// queueUnlock puts s on the writer's ready list unless it is there, then
// unlocks o.mu (held by the caller) and wakes the writer where s joined.
func (o *Outbox) queueUnlock(s *Sub) {
	joined := !s.queued
	if joined {
		s.queued = true
		o.ready = append(o.ready, s)
	}
	o.mu.Unlock()
	if joined {
		o.notify()
	}
}
