package hub

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// The change feed carries every applied mutation of a board-window to one
// consumer (the live views) without ever blocking the replica goroutine:
//
//   - under the replica's write lock, apply appends each change to the
//     tenant's feedLog (an append under a mutex no reader holds for long);
//   - the Hub's feed goroutine wakes every Config.PushInterval, takes each
//     tenant's pending changes under the tenant's read lock, and hands each
//     board-window's batch to Feed.Apply with a Window that reads the board
//     as it stands after exactly those changes; then calls Feed.Flush with
//     no lock held.
//
// Why drain at the tick rather than push each change to the consumer: the
// consumer recomputes views from the board, which it may read only under
// the tenant's read lock; doing that once per tick per board-window, for all
// changes since the last one, is what makes the cost follow change rather
// than audience. Reading under the same lock the changes were taken under
// makes the batch and the board agree.

// maxPending bounds the changes one board-window accumulates between ticks
// (a stalled feed goroutine, a huge batch); past it the changes are dropped
// and the batch says Reset: the consumer recomputes every view.
const maxPending = 1 << 16

// FeedChange is one applied mutation of a board-window: the board's report,
// the board-window's seq after it and its number of entries after it.
type FeedChange struct {
	board.Change
	Seq   uint64
	Total int
}

// FeedBatch is what happened to one board-window since the last tick.
type FeedBatch struct {
	Tenant, Board string
	Window        string       // the window's instance: "all", "week:2026-01-05"
	Changes       []FeedChange // oldest first
	Reset         bool         // replaced wholesale (reset, delete, overflow): recompute everything
}

// Feed consumes the change feed. Apply runs under the tenant's read lock
// (keep it short, call nothing of the Hub); Flush runs after every Apply of
// a tick, with no lock. Both are called from the Hub's one feed goroutine.
type Feed interface {
	Apply(b FeedBatch, w Window)
	Flush()
}

type feedHolder struct{ f Feed }

// SetFeed makes f the consumer of the change feed from the next tick on
// (nil stops it). Changes are recorded and drained whether or not a Feed is
// set, so memory stays bounded. Safe for concurrent use.
func (h *Hub) SetFeed(f Feed) { h.feed.Store(&feedHolder{f}) }

// feedKey names a board-window inside a tenant.
type feedKey struct {
	board string
	key   windowKey
}

// pendingWindow is one board-window's changes since the last tick.
type pendingWindow struct {
	changes []FeedChange
	reset   bool
}

// feedLog is one tenant's changes since the last tick. The replica
// goroutine appends (holding replica.mu for writing); the feed goroutine
// takes (holding replica.mu for reading); Window.Pending peeks.
type feedLog struct {
	mu      sync.Mutex // guards pending; taken after replica.mu
	pending map[feedKey]*pendingWindow
}

func newFeedLog() *feedLog { return &feedLog{pending: map[feedKey]*pendingWindow{}} }

func (f *feedLog) window(fk feedKey) *pendingWindow {
	p := f.pending[fk]
	if p == nil {
		p = &pendingWindow{}
		f.pending[fk] = p
	}
	return p
}

// note records cs, applied to w of board. A nil log records nothing.
func (f *feedLog) note(board string, w *window, cs ...board.Change) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.window(feedKey{board, w.key})
	for _, c := range cs {
		if !c.Applied && !c.Moved() {
			continue
		}
		if len(p.changes) >= maxPending {
			p.changes, p.reset = nil, true
		}
		p.changes = append(p.changes, FeedChange{Change: c, Seq: w.seq, Total: w.b.Len()})
	}
}

// reset records that every window of bs was replaced or deleted.
func (f *feedLog) reset(board string, keys ...windowKey) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		p := f.window(feedKey{board, k})
		p.changes, p.reset = nil, true
	}
}

// take returns and forgets the pending changes.
func (f *feedLog) take() map[feedKey]*pendingWindow {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.pending
	if len(out) > 0 {
		f.pending = map[feedKey]*pendingWindow{}
	}
	return out
}

// peek returns a copy of fk's pending changes.
func (f *feedLog) peek(fk feedKey) []FeedChange {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.pending[fk]; p != nil {
		return slices.Clone(p.changes)
	}
	return nil
}

// runFeed drains the feed every interval until the Hub closes.
func (h *Hub) runFeed(ctx context.Context) {
	t := time.NewTicker(h.cfg.PushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.drainFeed()
		}
	}
}

// drainFeed hands every tenant's pending changes to the Feed, then flushes.
// Cost: a read lock per tenant with changes, held while the Feed applies.
func (h *Hub) drainFeed() {
	var f Feed
	if fh := h.feed.Load(); fh != nil {
		f = fh.f
	}
	h.mu.RLock()
	rs := slices.Collect(maps.Values(h.tenants))
	h.mu.RUnlock()
	any := false
	for _, r := range rs {
		any = r.drainFeed(f) || any
	}
	if any && f != nil {
		f.Flush()
	}
}

func (r *replica) drainFeed(f Feed) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	pending := r.st.feed.take()
	if f == nil {
		return len(pending) > 0
	}
	for fk, p := range pending {
		b := FeedBatch{Tenant: r.tenant, Board: fk.board, Window: fk.key.String(), Changes: p.changes, Reset: p.reset}
		f.Apply(b, r.st.windowOf(fk))
	}
	return len(pending) > 0
}

// String names a window's instance: "all", or the kind and its first day,
// "week:2026-01-05".
func (k windowKey) String() string {
	if k.kind == kindAll {
		return k.kind.String()
	}
	return k.kind.String() + ":" + time.UnixMilli(k.start).UTC().Format(time.DateOnly)
}

// Window is one board-window as the change feed's consumer reads it, valid
// only inside Feed.Apply or the function given to ReadWindow, which hold
// the tenant's read lock. Every method is read-only.
type Window struct {
	ix       *identity.Index
	w        *window // nil: the window holds nothing
	log      *feedLog
	fk       feedKey
	profiles map[uint32]Profile
	q        *quarantine // the board's; nil where the board is gone
}

func (s *state) windowOf(fk feedKey) Window {
	win := Window{ix: s.ix, log: s.feed, fk: fk, profiles: s.profiles}
	if bs := s.boards[fk.board]; bs != nil {
		win.w = bs.windows[fk.key]
		win.q = &bs.quarantine
	}
	return win
}

// Key returns the name of the window's instance, as FeedBatch.Window has it.
func (v Window) Key() string { return v.fk.key.String() }

// Board returns the board-window's board, or nil where it holds nothing.
// The caller must not modify it.
func (v Window) Board() *board.Board {
	if v.w == nil {
		return nil
	}
	return v.w.b
}

// Seq returns the board-window's version.
func (v Window) Seq() uint64 {
	if v.w == nil {
		return 0
	}
	return v.w.seq
}

// Name returns the external id of member handle h. O(1).
func (v Window) Name(h uint32) (string, bool) { return v.ix.Label(h) }

// Profile returns member handle h's public profile, zero where it has
// none. O(1).
func (v Window) Profile(h uint32) Profile { return v.profiles[h] }

// UnderReview reports whether member handle h has a submission in the
// board's quarantine. O(1).
func (v Window) UnderReview(h uint32) bool { return v.q != nil && v.q.underReview(h) }

// Resolve returns the member handle an id or alias names. O(1).
func (v Window) Resolve(id string) (uint32, bool) { return v.ix.Resolve(id) }

// Pending returns a copy of the changes applied to the board-window since
// the feed last took them, oldest first. O(pending).
func (v Window) Pending() []FeedChange {
	if v.log == nil {
		return nil
	}
	return v.log.peek(v.fk)
}

// ReadWindow calls fn with the board-window l names, under the tenant's
// read lock, as Read does (same errors); the Window also names the window's
// instance and its pending changes, so a live view can join the feed
// exactly where the board stands.
func (h *Hub) ReadWindow(l Loc, fn func(Window) error) error {
	return h.locate(l, func(st *state, _ *boardState, key windowKey) error {
		return fn(st.windowOf(feedKey{l.Board, key}))
	})
}
