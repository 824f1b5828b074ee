package subscriptions

import (
	"math"
	"slices"
)

// A resume from the future: a client that resumes with since S through a
// gateway whose engine has seen less of the board-window than S (it trails
// the gateway the client left: cut off, paused, still replaying) must not
// be answered with this gateway's older state. Subscribe then holds the
// subscription: it is a watcher of its view like any other, but its first
// message waits until an Apply brings the board-window to S, which then
// gives it a diff from S (or, where the ring no longer reaches S, a
// snapshot at a seq of at least S). Nothing waits on a goroutine here: the
// hold is state of the board-window, released by the ticker's Apply, and
// the owner bounds it in time (Ready, Abandon). Where the engine has seen
// S but the view has not changed since before it, the view's state at S is
// its state now: a snapshot at seq S (snapshotAt), never one at the older
// seq the view last changed.

// heldSeq is a held subscription's Sub.seq: no tick's diff is ever at or
// past it, so Flush's deliver passes the subscription by at no cost.
const heldSeq = math.MaxUint64

// hold is one held subscription of a board-window and its since; s.ready
// is closed when it is no longer held (released or ended).
type hold struct {
	s     *Sub
	since uint64
}

// A board-window's held list, ws.held, is indexed by its subscriptions:
// held[i].s.hidx == i. Invariants (holdcheck_test.go's checkHolds checks
// them): a subscription is in exactly one held list, its own board-
// window's, while and only while its seq is heldSeq; it is a watcher of
// its view meanwhile (widx >= 0); its since is past the board-window's at
// (an Apply that reaches it releases it); Engine.held counts the lists'
// lengths. So a subscription leaves the list in O(1) (unholdLocked swaps
// the last hold into its place): a reconnect storm through a lagging
// gateway abandons thousands of holds of one board-window at once, and a
// scan each was quadratic (docs/BENCHMARKS.md, "Held resumes"). The list
// has no order to keep: an Apply releases every hold its seq reached, in
// one pass over the list.

// closedReady is the Ready of a subscription that is not held.
var closedReady = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// opening returns a new watcher's first message given since (nil: none),
// or nil where it must be held: since is past at, the board-window's seq
// as the engine last saw it. ws's lock is held. The cost of resume or of a
// snapshot.
func (v *view) opening(since *uint64, w Window, at uint64) *shared {
	if since == nil {
		return v.firstSnapshot()
	}
	s := *since
	if s <= v.seq {
		if d, ok := v.resume(s, w); ok {
			return d
		}
		return v.firstSnapshot()
	}
	if s <= at {
		return v.snapshotAt(s)
	}
	return nil
}

// snapshotAt encodes v's state as a snapshot at seq, which lies between
// the seq v last changed at and the board-window's seq the engine last
// saw: v's state over that whole span. Not cached: a resume's only.
func (v *view) snapshotAt(seq uint64) *shared {
	b := body{seq: seq, total: v.total, rows: v.st.rows}
	return &shared{typ: "snapshot", body: appendBody(make([]byte, 0, bodySize(b)), b), seq: seq}
}

// holdLocked holds s, a watcher of its view already, until the engine
// sees its board-window at since. ws's lock is held. O(1).
func (ws *windowState) holdLocked(e *Engine, s *Sub, since uint64) {
	s.seq = heldSeq
	s.ready = make(chan struct{}) // before Subscribe returns s: Ready reads it without a lock
	s.hidx = len(ws.held)
	ws.held = append(ws.held, hold{s: s, since: since})
	e.held.Add(1)
}

// releaseLocked gives every held subscription whose since the board-window
// has reached (at, after an Apply) its first message. ws's lock is held.
// O(held subscriptions of ws): one pass.
func (ws *windowState) releaseLocked(e *Engine, w Window) {
	if len(ws.held) == 0 {
		return
	}
	kept := ws.held[:0]
	for _, h := range ws.held {
		if h.since > ws.at {
			h.s.hidx = len(kept)
			kept = append(kept, h)
			continue
		}
		first := h.s.v.opening(&h.since, w, ws.at)
		h.s.out.put(h.s, first)
		h.s.seq = first.seq
		ws.endHold(e, h.s)
	}
	clear(ws.held[len(kept):]) // the released ones' slots: no reference kept
	ws.held = kept
}

// goneLocked ends the wait of every held subscription of ws, whose
// board-window an Apply found deleted: w holds nothing (its board, or this
// window of it, was deleted), or its board's generation changed (deleted
// and made again within one tick, at any seq), or its seq went back (a
// window dropped and added again; a reset of a standing window only ever
// adds one). The
// gateway has then applied what follows since in the log: the delete. A
// held subscription gets what a watcher of the board-window at since gets
// from the delete: it stays a watcher, at since, sent nothing (Flush
// skips a watcher whose seq is at or past its view's, and a deleted
// board-window's views are at its seq then), until the view passes since
// (a board made again under the name). Its Ready closes, so its owner
// never ends it with unavailable. ws's lock is held. O(held of ws).
// Where the board itself was deleted, its owner's EndBoard (gone.go) has
// ended every subscription of it, held ones too, before this Apply: what
// is left here is a window the board no longer keeps (a change of its
// settings dropped it).
func (ws *windowState) goneLocked(e *Engine) {
	for _, h := range ws.held {
		h.s.seq = h.since
		ws.endHold(e, h.s)
	}
	clear(ws.held)
	ws.held = ws.held[:0]
}

// unholdLocked forgets s's hold, if it has one: s ends. ws's lock is held.
// O(1): the last hold takes s's place.
func (ws *windowState) unholdLocked(e *Engine, s *Sub) {
	if s.seq != heldSeq {
		return
	}
	i, last := s.hidx, len(ws.held)-1
	ws.held[i] = ws.held[last]
	ws.held[i].s.hidx = i
	ws.held[last] = hold{}
	ws.held = ws.held[:last]
	if cap(ws.held) > 64 && len(ws.held) < cap(ws.held)/4 { // a storm that gave up keeps no array
		ws.held = slices.Clip(slices.Clone(ws.held))
	}
	ws.endHold(e, s)
}

// endHold marks s, out of ws.held already, no longer held: its Ready
// closes. ws's lock is held.
func (ws *windowState) endHold(e *Engine, s *Sub) {
	s.hidx = -1
	close(s.ready)
	e.held.Add(-1)
}

// Ready returns a channel closed once s's first message is in its outbox
// or s ended: at once where s was not held. O(1) and no lock: every
// resume asks, and Subscribe already knew (s.ready, set before it
// returned s, never reassigned).
func (e *Engine) Ready(s *Sub) <-chan struct{} {
	if s.ready == nil {
		return closedReady
	}
	return s.ready
}

// Abandon ends s where it is still held, and reports whether it did: the
// owner's bound passed before this gateway applied what the client holds.
// False where s got its first message meanwhile (it goes on as any other
// subscription) or ended already.
func (e *Engine) Abandon(s *Sub) bool {
	ws := s.v.ws
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if s.seq != heldSeq || s.widx < 0 {
		return false
	}
	e.unsubscribeLocked(s)
	return true
}
